import type { JobDetail, JobPage, JobSummary, KeyItem, KeyList } from './api-types.js'
import { isTerminal, JOB_STATES, UTILITY_SLUGS } from './vocabulary.js'
import { call, messageOf } from './api.js'
import { badge, empty, errorBox, field, h, loading, notice, replace, statusBadge, table } from './dom.js'
import { ago, bytes, duration, valueText, when } from './format.js'
import { title, type Page } from './page.js'
import { humanize } from './schema-form.js'

export function sourceCell(j: { source: string; apiKeyName: string | null; userEmail: string | null }): HTMLElement {
  return j.source === 'playground'
    ? h('span', {}, badge('playground', 'info'), ' ', j.userEmail ?? '')
    : h('span', {}, j.apiKeyName ?? '—')
}

function select(name: string, label: string, options: Array<[string, string]>, value: string | null): HTMLElement {
  const s = h(
    'select',
    { name },
    h('option', { value: '' }, `All`),
    options.map(([v, t]) => h('option', { value: v, selected: v === value }, t)),
  )
  return field(label, s)
}

export async function jobsPage(p: Page): Promise<void> {
  title('Jobs')
  const q = p.query
  const keys = await call<Pick<KeyList, 'items'>>('GET', '/keys').catch(() => ({ items: [] as KeyItem[] }))
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter jobs' },
    select(
      'utility',
      'Utility',
      UTILITY_SLUGS.map((u) => [u, u]),
      q.get('utility'),
    ),
    select(
      'status',
      'Status',
      JOB_STATES.map((s) => [s, s]),
      q.get('status'),
    ),
    select(
      'key',
      'Key',
      [
        ...keys.items.map((k): [string, string] => [k.id, `${k.name}${k.status !== 'active' ? ` (${k.status})` : ''}`]),
        ['playground', 'Playground runs'],
      ],
      q.get('key'),
    ),
    field('From', h('input', { type: 'date', name: 'from', value: q.get('from') ?? undefined })),
    field('To', h('input', { type: 'date', name: 'to', value: q.get('to') ?? undefined })),
    h(
      'div',
      { class: 'filter-actions' },
      h('button', { type: 'submit', class: 'button' }, 'Apply'),
      h('a', { class: 'button secondary', href: '/console/jobs' }, 'Clear'),
    ),
  )
  filters.addEventListener('submit', (e) => {
    e.preventDefault()
    const params = new URLSearchParams()
    for (const [k, v] of new FormData(filters)) if (typeof v === 'string' && v) params.set(k, v)
    p.navigate(`/console/jobs${params.size ? `?${params}` : ''}`)
  })
  const results = h('div', { 'aria-live': 'polite' }, loading('jobs'))
  replace(
    p.main,
    h(
      'div',
      { class: 'page-head' },
      h(
        'div',
        {},
        h('h1', {}, 'Jobs'),
        h(
          'p',
          { class: 'muted' },
          p.mayAll('jobs.read')
            ? 'Every job in the workspace, newest first.'
            : 'Jobs of your keys and your playground runs, newest first.',
        ),
      ),
      h('button', { type: 'button', class: 'button secondary', onclick: () => void jobsPage(p) }, 'Refresh'),
    ),
    filters,
    results,
  )
  const rows: JobSummary[] = []
  const load = async (cursor?: string) => {
    const params = new URLSearchParams()
    for (const k of ['utility', 'status', 'key', 'from', 'to']) if (q.get(k)) params.set(k, q.get(k)!)
    if (cursor) params.set('cursor', cursor)
    try {
      const page = await call<JobPage>('GET', `/jobs?${params}`)
      rows.push(...page.items)
      if (rows.length === 0) {
        const filtered = ['utility', 'status', 'key', 'from', 'to'].some((k) => q.get(k))
        replace(
          results,
          filtered
            ? empty(
                'No matching jobs',
                'No job matches these filters.',
                h('a', { class: 'button secondary', href: '/console/jobs' }, 'Clear the filters'),
              )
            : empty(
                'No jobs yet',
                'Jobs appear here when someone calls the API with a key or runs a utility in the playground.',
                h('a', { class: 'button', href: '/console/playground' }, 'Open the playground'),
              ),
        )
        return
      }
      const more = page.nextCursor
        ? h(
            'button',
            { type: 'button', class: 'button secondary', onclick: () => void load(page.nextCursor!) },
            'Load more',
          )
        : null
      replace(
        results,
        table(
          'Jobs',
          ['Job', 'Utility', 'Status', 'Started by', 'Created', 'Duration', 'Files'],
          rows.map((j) => [
            h('a', { href: `/console/jobs/${j.id}`, class: 'mono' }, j.id),
            j.utility,
            h(
              'span',
              {},
              statusBadge(j.status),
              j.errorCode ? h('span', { class: 'muted small' }, ` ${j.errorCode}`) : null,
            ),
            sourceCell(j),
            h('time', { datetime: j.createdAt, title: when(j.createdAt) }, ago(j.createdAt)),
            duration(j.totalMs),
            String(j.fileCount),
          ]),
          { captionHidden: true, testId: 'jobs-table' },
        ),
        more,
      )
    } catch (err) {
      replace(
        results,
        errorBox(messageOf(err), () => void jobsPage(p)),
      )
    }
  }
  await load()
}

/** Every callback attempt: when, what it got back, how long it took, what came next. */
function deliveryLog(log: JobDetail['callbackLog']): HTMLElement {
  if (!log.length) return h('p', { class: 'muted' }, 'No attempt has been made yet.')
  const rounds = new Set(log.map((e) => e.round)).size > 1
  return table(
    'Delivery log',
    [...(rounds ? ['Round'] : []), 'Attempt', 'At', 'Answer', 'Took', 'Then'],
    log.map((e) => [
      ...(rounds ? [String(e.round)] : []),
      String(e.attempt),
      when(e.at),
      e.statusCode
        ? `HTTP ${e.statusCode}`
        : e.errorClass
          ? `${e.errorClass.replace(/_/g, ' ')}${e.error ? `: ${e.error}` : ''}`
          : '—',
      duration(e.durationMs),
      e.outcome === 'delivered'
        ? statusBadge('delivered')
        : e.outcome === 'failed'
          ? statusBadge('failed')
          : `retry ${when(e.nextAttemptAt)}`,
    ]),
    { testId: 'callback-log', captionHidden: true },
  )
}

/** Sends the callback again (same webhook-id); the answer says why when it cannot be. */
function redeliverButton(id: string): HTMLElement {
  const out = h('div', { class: 'actions' })
  const button = h('button', { type: 'button', class: 'button secondary small' }, 'Redeliver') as HTMLButtonElement
  button.onclick = async () => {
    button.disabled = true
    try {
      const r = await call<{ round: number }>('POST', `/jobs/${encodeURIComponent(id)}/callback/redeliver`)
      out.replaceChildren(
        notice(`Redelivery asked for (round ${r.round}): the same event, with the same webhook-id.`, 'success'),
      )
    } catch (err) {
      button.disabled = false
      out.append(notice(messageOf(err), 'warning'))
    }
  }
  out.append(button)
  return out
}

/** "120 of 500 pages" with a bar while the total is known. */
function progressView(p: NonNullable<JobDetail['job']['progress']>): HTMLElement {
  const text = p.total === null ? `${p.done} ${p.unit}` : `${p.done} of ${p.total} ${p.unit}`
  return h(
    'span',
    { 'data-testid': 'job-progress' },
    p.total ? h('progress', { max: String(p.total), value: String(p.done), 'aria-label': 'Progress' }) : null,
    ` ${text}`,
  )
}

function dl(items: Array<[string, unknown]>): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    items.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v as HTMLElement | string)]),
  )
}

export async function jobPage(p: Page): Promise<void> {
  const id = p.params[0]
  title(id)
  replace(p.main, h('p', {}, h('a', { href: '/console/jobs' }, '← All jobs')), loading('the job'))
  let timer: number | undefined
  const render = async () => {
    let d: JobDetail
    try {
      d = await call<JobDetail>('GET', `/jobs/${encodeURIComponent(id)}`)
    } catch (err) {
      replace(
        p.main,
        h('p', {}, h('a', { href: '/console/jobs' }, '← All jobs')),
        h('h1', {}, 'Job'),
        errorBox(messageOf(err), () => void render()),
      )
      return
    }
    if (!p.main.isConnected || location.pathname !== `/console/jobs/${id}`) return
    const j = d.job
    const t = j.timings
    const extras = j.result ? Object.entries(j.result).filter(([k]) => k !== 'files') : []
    const sections: HTMLElement[] = [
      h(
        'section',
        { 'aria-labelledby': 'about' },
        h('h2', { id: 'about' }, 'About'),
        dl([
          ['Utility', j.utility],
          ['Mode', j.mode],
          [
            'Started by',
            d.source === 'playground' ? `Playground run by ${d.userEmail}` : `API key ${d.apiKeyName ?? ''}`,
          ],
          ['Created', when(j.createdAt)],
          ['Started', when(j.startedAt)],
          ['Finished', when(j.finishedAt)],
          ...(j.progress ? [['Progress', progressView(j.progress)] as [string, unknown]] : []),
        ]),
      ),
      h(
        'section',
        { 'aria-labelledby': 'timings' },
        h('h2', { id: 'timings' }, 'Timings'),
        dl([
          ['Waiting in queue', duration(t.queueMs)],
          ['Inside the utility', duration(t.upstreamMs)],
          ['Copying to storage', duration(t.storageMs)],
          ['Total', duration(t.totalMs)],
        ]),
      ),
    ]
    if (j.error) {
      sections.push(
        h(
          'section',
          { 'aria-labelledby': 'error' },
          h('h2', { id: 'error' }, 'Error'),
          h(
            'div',
            { class: 'alert alert-error' },
            h(
              'p',
              {},
              h('strong', { class: 'mono' }, j.error.code),
              j.error.upstreamStatus ? ` (upstream answered ${j.error.upstreamStatus})` : '',
            ),
            h('p', {}, j.error.message),
          ),
        ),
      )
    }
    if (j.result) {
      sections.push(
        h(
          'section',
          { 'aria-labelledby': 'files' },
          h('h2', { id: 'files' }, `Files (${j.result.files.length})`),
          extras.length ? dl(extras.map(([k, v]) => [humanize(k), valueText(v)])) : null,
          j.result.files.length
            ? table(
                'Output files',
                ['File', 'Size', 'Type', 'Link valid until'],
                j.result.files.map((f) => [
                  h('a', { href: f.url, download: f.name, rel: 'noreferrer' }, f.path ?? f.name),
                  bytes(f.size),
                  f.contentType ?? '—',
                  f.urlExpiresAt ? when(f.urlExpiresAt) : 'no expiry',
                ]),
                { captionHidden: true, testId: 'files-table' },
              )
            : h('p', { class: 'muted' }, 'The job produced no files.'),
        ),
      )
    }
    sections.push(
      h(
        'section',
        { 'aria-labelledby': 'metadata' },
        h('h2', { id: 'metadata' }, 'Metadata'),
        j.metadata && Object.keys(j.metadata).length
          ? table(
              'Metadata',
              ['Key', 'Value'],
              Object.entries(j.metadata).map(([k, v]) => [h('span', { class: 'mono' }, k), valueText(v)]),
              { captionHidden: true },
            )
          : h('p', { class: 'muted' }, 'No metadata was sent with this job.'),
      ),
    )
    sections.push(
      h(
        'section',
        { 'aria-labelledby': 'callback' },
        h('h2', { id: 'callback' }, 'Callback'),
        j.callback
          ? dl([
              ['URL', h('span', { class: 'mono break' }, j.callback.url)],
              ['Delivery', statusBadge(j.callback.status)],
              ['Attempts', String(j.callback.attempts)],
              ['Last attempt', when(d.callbackDelivery?.lastAttemptAt)],
              ['Last answer', d.callbackDelivery?.lastStatusCode ? `HTTP ${d.callbackDelivery.lastStatusCode}` : '—'],
              ['Last problem', d.callbackDelivery?.lastError ?? '—'],
              ['Next attempt', when(d.callbackDelivery?.nextAttemptAt)],
            ])
          : h('p', { class: 'muted' }, 'No callback URL was given.'),
        j.callback ? h('h3', {}, 'Delivery log') : null,
        j.callback ? deliveryLog(d.callbackLog) : null,
        j.callback && d.callbackDelivery && d.callbackDelivery.status !== 'pending' ? redeliverButton(j.id) : null,
      ),
    )
    replace(
      p.main,
      h('p', {}, h('a', { href: '/console/jobs' }, '← All jobs')),
      h(
        'div',
        { class: 'page-head' },
        h('h1', { class: 'mono' }, j.id),
        h('span', { 'data-testid': 'job-status' }, statusBadge(j.status)),
      ),
      h('div', { class: 'detail-grid' }, sections),
    )
    if (!isTerminal(j.status)) timer = window.setTimeout(() => void render(), 1500)
  }
  window.addEventListener('popstate', () => clearTimeout(timer), { once: true })
  await render()
}
