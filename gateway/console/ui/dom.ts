/** A tiny DOM builder: elements from data, never from HTML strings (no injection). */
export type Child = Node | string | number | null | undefined | false | Child[]
/** An event handler; an async one's failure is reported, never left as an unhandled rejection. */
type Handler = (e: Event) => void | Promise<void>
type Attrs = Record<string, string | number | boolean | null | undefined | Handler>

function append(parent: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    if (Array.isArray(c)) append(parent, c)
    else parent.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)))
  }
}

function applyAttrs(el: Element, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue
    if (typeof v === 'function') {
      el.addEventListener(k.slice(2).toLowerCase(), (e) => {
        const done = v(e)
        if (done instanceof Promise) done.catch((err: unknown) => console.error('dutil console: an action failed', err))
      })
    } else if (v === true) el.setAttribute(k, '')
    else el.setAttribute(k, String(v))
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  applyAttrs(el, attrs)
  append(el, children)
  return el
}

export function svg(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag)
  applyAttrs(el, attrs)
  append(el, children)
  return el
}

export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren()
  append(el, children)
}

export function loading(what: string): HTMLElement {
  return h(
    'p',
    { class: 'loading', role: 'status' },
    h('span', { class: 'spinner', 'aria-hidden': 'true' }),
    `Loading ${what}…`,
  )
}

export function errorBox(message: string, retry?: () => void): HTMLElement {
  return h(
    'div',
    { class: 'alert alert-error', role: 'alert' },
    h('p', {}, message),
    retry ? h('button', { type: 'button', class: 'button secondary', onclick: retry }, 'Try again') : null,
  )
}

export function notice(message: Child, kind: 'info' | 'success' | 'warning' = 'info'): HTMLElement {
  return h('div', { class: `alert alert-${kind}`, role: kind === 'warning' ? 'alert' : 'status' }, message)
}

export function empty(title: string, text: Child, action?: Child): HTMLElement {
  return h('div', { class: 'empty' }, h('h2', {}, title), h('p', {}, text), action ?? null)
}

export function badge(text: string, tone: string): HTMLElement {
  return h('span', { class: `badge badge-${tone}` }, text)
}

const STATUS_TONES: Record<string, string> = {
  succeeded: 'ok',
  failed: 'bad',
  cancelled: 'muted',
  queued: 'info',
  running: 'info',
  active: 'ok',
  revoked: 'muted',
  expired: 'warn',
  delivered: 'ok',
  pending: 'info',
}
export function statusBadge(status: string): HTMLElement {
  return badge(status, STATUS_TONES[status] ?? 'muted')
}

/** A labelled form field; `control` gets the id. */
export function field(
  label: string,
  control: HTMLElement,
  hint?: string,
  id = `f-${Math.random().toString(36).slice(2, 9)}`,
): HTMLElement {
  control.id = id
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id)
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl)
}

/** A button that copies text, announcing the result. */
export function copyButton(text: () => string, label = 'Copy'): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'button secondary small' }, label)
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text())
      b.textContent = 'Copied'
    } catch {
      b.textContent = 'Select and copy'
    }
    setTimeout(() => (b.textContent = label), 2000)
  })
  return b
}

/** A secret shown once, with a copy button. */
export function secretValue(label: string, value: string, testId: string): HTMLElement {
  return h(
    'div',
    { class: 'secret' },
    h('span', { class: 'secret-label' }, label),
    h('code', { 'data-testid': testId }, value),
    copyButton(() => value, `Copy ${/^[A-Z]{2}/.test(label) ? label : label.toLowerCase()}`),
  )
}

export function dialog(title: string, body: Child, actions: Child = null): HTMLDialogElement {
  const id = `d-${Math.random().toString(36).slice(2, 9)}`
  const d = h(
    'dialog',
    { 'aria-labelledby': id, class: 'dialog' },
    h('h2', { id }, title),
    body,
    h('div', { class: 'actions' }, actions),
  )
  d.addEventListener('close', () => d.remove())
  document.body.appendChild(d)
  d.showModal()
  return d
}

export function confirmDialog(title: string, text: string, confirmLabel: string, danger = true): Promise<boolean> {
  return new Promise((resolve) => {
    let answered = false
    const done = (v: boolean) => {
      if (answered) return
      answered = true
      resolve(v)
      d.close()
    }
    const d = dialog(title, h('p', {}, text), [
      h('button', { type: 'button', class: 'button secondary', onclick: () => done(false) }, 'Cancel'),
      h(
        'button',
        { type: 'button', class: danger ? 'button danger' : 'button', onclick: () => done(true) },
        confirmLabel,
      ),
    ])
    d.addEventListener('close', () => done(false))
  })
}

export function table(
  caption: string,
  headers: string[],
  rows: Child[][],
  opts: { captionHidden?: boolean; testId?: string } = {},
): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      opts.testId ? { 'data-testid': opts.testId } : {},
      h('caption', { class: opts.captionHidden ? 'visually-hidden' : '' }, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((x) => h('th', { scope: 'col' }, x || h('span', { class: 'visually-hidden' }, 'Share'))),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((r) =>
          h(
            'tr',
            {},
            r.map((c) => h('td', {}, c)),
          ),
        ),
      ),
    ),
  )
}
