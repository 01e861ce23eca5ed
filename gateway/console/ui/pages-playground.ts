import type { Utility } from './api-types.js'
import { ApiFailure, call, messageOf } from './api.js'
import { confirmDialog, dialog, errorBox, field, h, loading, notice, replace, secretValue, statusBadge } from './dom.js'
import { duration } from './format.js'
import { title, type Page } from './page.js'
import { schemaForm, showFieldErrors } from './schema-form.js'
import { isTerminal } from './vocabulary.js'

export async function playgroundPage(p: Page): Promise<void> {
  title('Playground')
  replace(p.main, h('h1', {}, 'Playground'), loading('utilities'))
  let utilities: Utility[]
  try {
    utilities = (await call<{ items: Utility[] }>('GET', '/utilities')).items
  } catch (err) {
    replace(
      p.main,
      h('h1', {}, 'Playground'),
      errorBox(messageOf(err), () => void playgroundPage(p)),
    )
    return
  }
  const chosen = utilities.find((u) => u.slug === p.query.get('utility')) ?? utilities[0]
  const picker = h(
    'select',
    { name: 'utility' },
    utilities.map((u) => h('option', { value: u.slug, selected: u === chosen }, u.name)),
  )
  picker.addEventListener('change', () => p.navigate(`/console/playground?utility=${picker.value}`, true))
  const formSlot = h('div')
  const result = h('div', { 'aria-live': 'polite' })
  const secretSection = p.may('playgroundSecret.reveal') ? playgroundSecret(p) : null
  replace(
    p.main,
    h(
      'div',
      { class: 'page-head' },
      h('h1', {}, 'Playground'),
      h(
        'p',
        { class: 'muted' },
        'Run a utility without an API key. Runs are listed as playground jobs under your name.',
      ),
    ),
    h(
      'div',
      { class: 'playground' },
      h(
        'section',
        { 'aria-labelledby': 'run' },
        h('h2', { id: 'run', class: 'visually-hidden' }, 'Run a utility'),
        field('Utility', picker),
        h('p', { class: 'muted' }, chosen.description),
        formSlot,
      ),
      h(
        'section',
        { 'aria-labelledby': 'result-h', class: 'result-panel' },
        h('h2', { id: 'result-h' }, 'Result'),
        result,
      ),
    ),
    secretSection,
  )
  replace(result, h('p', { class: 'muted' }, 'Fill in the form and run it; the job appears here.'))

  const build = (value: Record<string, unknown> | undefined) => {
    const input = schemaForm(chosen.inputSchema, 'input', 'input', value, true)
    // With files chosen the URL field may stay empty: the browser's own check of it stands down.
    const files = filePicker(chosen, (count) => (form.noValidate = count > 0))
    const callbackUrl = h('input', { type: 'text', inputmode: 'url', placeholder: 'https://…', autocomplete: 'off' })
    const status = h('div', { 'aria-live': 'polite' })
    const run = h('button', { type: 'submit', class: 'button' }, `Run ${chosen.name}`)
    const form = h(
      'form',
      { class: 'stack', 'data-testid': 'playground-form' },
      files?.el ?? null,
      input.el,
      h(
        'details',
        { class: 'optional-group' },
        h('summary', {}, 'Callback (optional)'),
        h(
          'div',
          { 'data-field': 'callbackUrl' },
          field(
            'Callback URL',
            callbackUrl,
            'An https:// URL that receives the signed job.succeeded / job.failed callback, signed with the playground signing secret below.',
          ),
        ),
      ),
      status,
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          { type: 'button', class: 'button secondary', onclick: () => build(chosen.exampleInput) },
          'Fill in the example',
        ),
        run,
      ),
    )
    form.addEventListener('submit', async (e) => {
      e.preventDefault()
      replace(status)
      showFieldErrors(form, [])
      run.disabled = true
      try {
        const read = (input.read() ?? {}) as Record<string, unknown>
        const chosenFiles = files?.chosen() ?? []
        let body: unknown = {
          input: read,
          ...(callbackUrl.value.trim() ? { callbackUrl: callbackUrl.value.trim() } : {}),
        }
        if (chosenFiles.length && files) {
          // The files go as parts of the request; the rest of the input beside them.
          const form = new FormData()
          for (const f of chosenFiles) form.append(files.field, f, f.name)
          const { [files.replaces]: _replaced, ...rest } = read
          form.append('input', JSON.stringify(rest))
          if (callbackUrl.value.trim()) form.append('callbackUrl', callbackUrl.value.trim())
          body = form
        }
        const job = await call<{ id: string; status: string }>('POST', `/playground/${chosen.slug}`, body)
        void follow(job.id)
      } catch (err) {
        const left = err instanceof ApiFailure ? showFieldErrors(form, err.details) : []
        replace(
          status,
          errorBox(
            err instanceof ApiFailure && left.length === 0 && err.details.length
              ? 'Some fields need attention: see the messages next to them.'
              : messageOf(err),
          ),
        )
      } finally {
        run.disabled = false
      }
    })
    replace(formSlot, form)
  }
  const follow = async (id: string) => {
    for (;;) {
      if (!result.isConnected) return
      let d: {
        job: {
          id: string
          status: string
          timings: { totalMs: number | null }
          result: { files: Array<{ url: string; name: string; path?: string }> } | null
          error: { code: string; message: string } | null
        }
      }
      try {
        d = await call('GET', `/jobs/${id}`)
      } catch (err) {
        replace(result, errorBox(messageOf(err)))
        return
      }
      const j = d.job
      replace(
        result,
        h(
          'p',
          {},
          h('a', { href: `/console/jobs/${j.id}`, class: 'mono' }, j.id),
          ' ',
          h('span', { 'data-testid': 'playground-status' }, statusBadge(j.status)),
          j.timings.totalMs !== null ? ` in ${duration(j.timings.totalMs)}` : '',
        ),
        j.error ? errorBox(`${j.error.code}: ${j.error.message}`) : null,
        j.result
          ? h(
              'ul',
              { class: 'files' },
              j.result.files.map((f) =>
                h('li', {}, h('a', { href: f.url, download: f.name, rel: 'noreferrer' }, f.path ?? f.name)),
              ),
            )
          : null,
        !isTerminal(j.status) ? loading('the result') : null,
      )
      if (isTerminal(j.status)) return
      await new Promise((r) => setTimeout(r, 1000))
    }
  }
  build(undefined)
}

function playgroundSecret(p: Page): HTMLElement {
  const status = h('div', { 'aria-live': 'polite' })
  const show = async (kind: 'reveal' | 'rotate') => {
    if (
      kind === 'rotate' &&
      !(await confirmDialog(
        'Rotate the playground signing secret?',
        'Playground callbacks are signed with the new secret from the next attempt on.',
        'Rotate',
        false,
      ))
    )
      return
    try {
      const res = await call<{ signingSecret: string }>('POST', `/workspace/playground-secret/${kind}`)
      dialog(
        kind === 'rotate' ? 'New playground signing secret' : 'Playground signing secret',
        secretValue('Signing secret', res.signingSecret, 'playground-secret'),
        h(
          'button',
          { type: 'button', class: 'button', onclick: (e) => (e.target as HTMLElement).closest('dialog')!.close() },
          'Done',
        ),
      )
      if (kind === 'rotate') replace(status, notice('The playground signing secret was rotated.', 'success'))
    } catch (err) {
      replace(status, errorBox(messageOf(err)))
    }
  }
  return h(
    'section',
    { 'aria-labelledby': 'ws-secret', class: 'card' },
    h('h2', { id: 'ws-secret' }, 'Playground signing secret'),
    h(
      'p',
      { class: 'muted' },
      'Callbacks of playground runs have no key: they are signed with this secret of their own.',
    ),
    status,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'button secondary', onclick: () => void show('reveal') }, 'Reveal'),
      p.may('playgroundSecret.rotate')
        ? h('button', { type: 'button', class: 'button secondary', onclick: () => void show('rotate') }, 'Rotate')
        : null,
    ),
  )
}

/**
 * Documents from this computer, for a utility that takes a document (`url`) or several (`files`):
 * a file input and a drop zone. Chosen files are sent with the run (stored as the person's own
 * files, kept a day) in place of the URL field.
 */
function filePicker(
  utility: Utility,
  onChange: (count: number) => void,
): { el: HTMLElement; chosen: () => File[]; field: 'file' | 'files'; replaces: 'url' | 'files' } | null {
  const props = (utility.inputSchema as { properties?: Record<string, unknown> }).properties ?? {}
  const several = 'files' in props && !('url' in props)
  if (!several && !('url' in props)) return null
  let chosen: File[] = []
  const input = h('input', { type: 'file', multiple: several, 'data-testid': 'playground-file' }) as HTMLInputElement
  const list = h('p', { class: 'muted', 'aria-live': 'polite', 'data-testid': 'playground-files' }, 'No file chosen.')
  const clear = h('button', { type: 'button', class: 'button secondary small', hidden: true }, 'Clear')
  const show = (files: File[]) => {
    chosen = several ? files : files.slice(0, 1)
    replace(
      list,
      chosen.length
        ? `${chosen.map((f) => `${f.name} (${Math.max(1, Math.round(f.size / 1024))} KB)`).join(', ')}: sent with the run, in place of the URL.`
        : 'No file chosen.',
    )
    clear.hidden = chosen.length === 0
    onChange(chosen.length)
  }
  input.addEventListener('change', () => show([...(input.files ?? [])]))
  clear.addEventListener('click', () => {
    input.value = ''
    show([])
  })
  const zone = h(
    'div',
    { class: 'file-drop', 'data-testid': 'playground-drop' },
    field(
      several ? 'Documents from this computer' : 'A document from this computer',
      input,
      several
        ? 'Choose files or drop them here; they are merged in the order chosen.'
        : 'Choose a file or drop it here, or give its URL below.',
    ),
    list,
    clear,
  )
  zone.addEventListener('dragover', (e) => {
    e.preventDefault()
    zone.classList.add('dragging')
  })
  zone.addEventListener('dragleave', () => zone.classList.remove('dragging'))
  zone.addEventListener('drop', (e) => {
    e.preventDefault()
    zone.classList.remove('dragging')
    show([...(e.dataTransfer?.files ?? [])])
  })
  return { el: zone, chosen: () => chosen, field: several ? 'files' : 'file', replaces: several ? 'files' : 'url' }
}
