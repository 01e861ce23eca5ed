import { h } from './dom.js'

/** The subset of JSON Schema the utilities' input schemas use. */
export interface Schema {
  type?: string
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  description?: string
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
  maxLength?: number
  pattern?: string
  /** A secret (a password): sent, never shown back. */
  writeOnly?: boolean
}

export interface FormPart {
  el: HTMLElement
  /** The value, or undefined when left empty. */
  read(): unknown
}

const WORDS: Record<string, string> = { url: 'URL', pdf: 'PDF', css: 'CSS', html: 'HTML' }

/** `pdfOptions` → "PDF options", `preferCSSPageSize` → "Prefer CSS page size". */
export function humanize(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
  return words
    .map((w, i) => {
      const known = WORDS[w.toLowerCase()]
      if (known) return known
      const lower = w === w.toUpperCase() && w.length > 1 ? w : w.toLowerCase()
      return i === 0 ? lower.charAt(0).toUpperCase() + lower.slice(1) : lower
    })
    .join(' ')
}

/** The allowed values of an enum-like schema (enum, or anyOf of consts as TypeBox writes unions). */
export function choicesOf(s: Schema): unknown[] | null {
  if (Array.isArray(s.enum)) return s.enum
  if (s.anyOf && s.anyOf.length > 0 && s.anyOf.every((b) => 'const' in b)) return s.anyOf.map((b) => b.const)
  return null
}

let counter = 0
const nextId = () => `sf-${++counter}`

function control(
  path: string,
  label: string,
  input: HTMLElement,
  hint: string | undefined,
  required: boolean,
): HTMLElement {
  const id = nextId()
  input.id = id
  input.setAttribute('data-path', path)
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null
  if (hintEl) input.setAttribute('aria-describedby', hintEl.id)
  return h(
    'div',
    { class: 'field', 'data-field': path },
    h('label', { for: id }, label, required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null),
    input,
    hintEl,
  )
}

/**
 * Builds form controls for a schema; `read()` gives back the value the form describes, leaving
 * out what was not filled in. `path` names the value in API error details (e.g. input.url).
 */
export function schemaForm(
  schema: Schema,
  path: string,
  name: string,
  value: unknown,
  required: boolean,
  /** Inside an optional group: a choice it requires may still be left unset, and the group with it. */
  inOptional = false,
): FormPart {
  const label = humanize(name)
  const choices = choicesOf(schema)
  if (choices) {
    const select = h(
      'select',
      { required: required && !inOptional },
      required && !inOptional ? null : h('option', { value: '' }, 'Not set'),
      choices.map((c) => h('option', { value: String(c), selected: value === c }, String(c))),
    )
    return {
      el: control(path, label, select, schema.description, required),
      read: () => (select.value === '' ? undefined : choices.find((c) => String(c) === select.value)),
    }
  }
  switch (schema.type) {
    case 'object': {
      const props = Object.entries(schema.properties ?? {})
      const optionalGroup = inOptional || (!required && path !== 'input')
      const parts = props.map(([k, s]) =>
        schemaForm(
          s,
          `${path}.${k}`,
          k,
          (value as Record<string, unknown> | undefined)?.[k],
          (schema.required ?? []).includes(k),
          optionalGroup,
        ),
      )
      const read = () => {
        const out: Record<string, unknown> = {}
        props.forEach(([k], i) => {
          const v = parts[i].read()
          if (v !== undefined) out[k] = v
        })
        return Object.keys(out).length || required ? out : undefined
      }
      const legend = h('legend', {}, label, required ? null : h('span', { class: 'optional' }, ' (optional)'))
      const fieldset = h(
        'fieldset',
        { class: 'group', 'data-field': path },
        legend,
        schema.description ? h('p', { class: 'hint' }, schema.description) : null,
        parts.map((p) => p.el),
      )
      if (required || path === 'input') return { el: fieldset, read }
      return {
        el: h(
          'details',
          { class: 'optional-group', open: value !== undefined },
          h('summary', {}, `${label} (optional)`),
          fieldset,
        ),
        read,
      }
    }
    case 'array': {
      const item = schema.items ?? { type: 'string' }
      if (item.type !== 'object') {
        const area = h('textarea', { rows: 3, required }, Array.isArray(value) ? value.join('\n') : '')
        return {
          el: control(path, label, area, `${schema.description ?? ''} One per line.`.trim(), required),
          read: () => {
            const lines = area.value
              .split('\n')
              .map((s) => s.trim())
              .filter(Boolean)
            return lines.length ? lines : undefined
          },
        }
      }
      const rows: Array<{ part: FormPart; row: HTMLElement }> = []
      const list = h('ol', { class: 'rows' })
      const addRow = (v?: unknown) => {
        const part = schemaForm(
          { ...item },
          `${path}.${rows.length}`,
          `${humanize(name)} ${rows.length + 1}`,
          v ?? {},
          true,
        )
        const entry = { part, row: h('li', {}) }
        const remove = h(
          'button',
          {
            type: 'button',
            class: 'button secondary small',
            'aria-label': `Remove ${label.toLowerCase()} ${rows.length + 1}`,
          },
          'Remove',
        )
        remove.addEventListener('click', () => {
          rows.splice(rows.indexOf(entry), 1)
          entry.row.remove()
        })
        entry.row.append(part.el, remove)
        rows.push(entry)
        list.append(entry.row)
      }
      const initial = Array.isArray(value) && value.length ? value : [undefined]
      initial.forEach(addRow)
      const add = h(
        'button',
        { type: 'button', class: 'button secondary small', onclick: () => addRow() },
        `Add ${label.toLowerCase().replace(/s$/, '')}`,
      )
      return {
        el: h(
          'fieldset',
          { class: 'group', 'data-field': path },
          h('legend', {}, label),
          schema.description ? h('p', { class: 'hint' }, schema.description) : null,
          list,
          add,
        ),
        read: () => {
          const values = rows
            .map((r) => r.part.read())
            .filter((v) => v !== undefined && Object.keys(v as object).length > 0)
          return values.length || required ? values : undefined
        },
      }
    }
    case 'boolean': {
      const select = h(
        'select',
        {},
        h('option', { value: '' }, 'Not set'),
        h('option', { value: 'true', selected: value === true }, 'Yes'),
        h('option', { value: 'false', selected: value === false }, 'No'),
      )
      return {
        el: control(path, label, select, schema.description, required),
        read: () => (select.value === '' ? undefined : select.value === 'true'),
      }
    }
    case 'number':
    case 'integer': {
      const input = h('input', {
        type: 'number',
        step: schema.type === 'integer' ? 1 : 'any',
        min: schema.minimum,
        max: schema.maximum,
        value: typeof value === 'number' ? value : undefined,
        required,
        inputmode: 'decimal',
      })
      return {
        el: control(path, label, input, schema.description, required),
        read: () => (input.value === '' ? undefined : Number(input.value)),
      }
    }
    default: {
      if (schema.writeOnly) {
        // A password: hidden as it is typed, taken as typed (spaces are part of it), never prefilled.
        const secret = h('input', {
          type: 'password',
          autocomplete: 'new-password',
          maxlength: schema.maxLength,
          required,
        })
        return {
          el: control(path, label, secret, schema.description, required),
          read: () => (secret.value === '' ? undefined : secret.value),
        }
      }
      const isUrl = /url/i.test(name)
      const input = h('input', {
        type: 'text',
        inputmode: isUrl ? 'url' : undefined,
        autocomplete: 'off',
        spellcheck: 'false',
        maxlength: schema.maxLength,
        required,
        value: typeof value === 'string' ? value : undefined,
      })
      return {
        el: control(path, label, input, schema.description, required),
        read: () => (input.value.trim() === '' ? undefined : input.value.trim()),
      }
    }
  }
}

/** Marks the fields named by API error details; returns details no field took. */
export function showFieldErrors(
  form: HTMLElement,
  details: Array<{ path: string; message: string }>,
): Array<{ path: string; message: string }> {
  form.querySelectorAll('.field-error').forEach((e) => e.remove())
  form.querySelectorAll('[aria-invalid]').forEach((e) => e.removeAttribute('aria-invalid'))
  const left: Array<{ path: string; message: string }> = []
  for (const d of details) {
    const target = form.querySelector(`[data-field="${CSS.escape(d.path)}"]`)
    if (!target) {
      left.push(d)
      continue
    }
    const input = target.querySelector('input, select, textarea')
    input?.setAttribute('aria-invalid', 'true')
    target.append(h('p', { class: 'field-error' }, d.message))
  }
  return left
}
