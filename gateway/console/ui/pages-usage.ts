import type { Usage } from './api-types.js'
import { call, messageOf } from './api.js'
import { badge, empty, errorBox, field, h, loading, replace, table } from './dom.js'
import { jobsPerDayChart, meter } from './chart.js'
import { UTILITY_SLUGS } from './vocabulary.js'
import { duration, num, percent } from './format.js'
import { title, type Page } from './page.js'

function tile(label: string, value: string, testId?: string): HTMLElement {
  return h(
    'div',
    { class: 'tile' },
    h('p', { class: 'tile-label' }, label),
    h('p', { class: 'tile-value', 'data-testid': testId }, value),
  )
}

export async function usagePage(p: Page): Promise<void> {
  title('Usage')
  const days = p.query.get('days') ?? '30'
  const keys = await call<{ items: Array<{ id: string; name: string }> }>('GET', '/keys').catch(() => ({ items: [] }))
  const range = h(
    'select',
    { name: 'days' },
    ['7', '30', '90', '365'].map((d) => h('option', { value: d, selected: d === days }, `Last ${d} days`)),
  )
  const key = h(
    'select',
    { name: 'key' },
    h('option', { value: '' }, 'All keys'),
    keys.items.map((k) => h('option', { value: k.id, selected: p.query.get('key') === k.id }, k.name)),
    h('option', { value: 'playground', selected: p.query.get('key') === 'playground' }, 'Playground runs'),
  )
  const utility = h(
    'select',
    { name: 'utility' },
    h('option', { value: '' }, 'All utilities'),
    UTILITY_SLUGS.map((u) => h('option', { value: u, selected: p.query.get('utility') === u }, u)),
  )
  const controls = h(
    'form',
    { class: 'filters', 'aria-label': 'Usage range' },
    field('Range', range),
    field('Key', key),
    field('Utility', utility),
  )
  controls.addEventListener('change', () => {
    const params = new URLSearchParams()
    for (const [k, v] of new FormData(controls)) if (typeof v === 'string' && v) params.set(k, v)
    p.navigate(`/console/usage?${params}`, true)
  })
  const body = h('div', { 'aria-live': 'polite' }, loading('usage'))
  replace(
    p.main,
    h(
      'div',
      { class: 'page-head' },
      h('h1', {}, 'Usage'),
      h(
        'p',
        { class: 'muted' },
        'Jobs per day by key and utility (UTC days). Usage is kept for 400 days, longer than the jobs themselves.',
      ),
    ),
    controls,
    body,
  )
  const params = new URLSearchParams({ days })
  if (p.query.get('key')) params.set('key', p.query.get('key')!)
  if (p.query.get('utility')) params.set('utility', p.query.get('utility')!)
  let u: Usage
  try {
    u = await call<Usage>('GET', `/usage?${params}`)
  } catch (err) {
    replace(
      body,
      errorBox(messageOf(err), () => void usagePage(p)),
    )
    return
  }
  if (u.total.jobs === 0) {
    replace(
      body,
      empty(
        'No usage in this range',
        'Nothing ran in these days. Pick a longer range, or run a utility in the playground.',
        h('a', { class: 'button secondary', href: '/console/playground' }, 'Open the playground'),
      ),
    )
    return
  }
  const maxKey = Math.max(...u.byKey.map((k) => k.jobs))
  const maxUtil = Math.max(...u.byUtility.map((k) => k.jobs))
  const maxCode = Math.max(1, ...u.byErrorCode.map((c) => c.count))
  replace(
    body,
    h(
      'div',
      { class: 'tiles' },
      tile('Jobs', num(u.total.jobs), 'usage-total-jobs'),
      tile('Succeeded', num(u.total.succeeded)),
      tile('Failed', `${num(u.total.failed)} (${percent(u.total.failed, u.total.jobs)})`),
      tile('Total time', duration(u.total.totalMs)),
      tile('Time in utilities', duration(u.total.upstreamMs)),
    ),
    h(
      'section',
      { 'aria-labelledby': 'per-day' },
      h('h2', { id: 'per-day' }, 'Jobs per day'),
      jobsPerDayChart(u.days, `Jobs per day from ${u.from} to ${u.to}`),
    ),
    h(
      'div',
      { class: 'two-col' },
      h(
        'section',
        { 'aria-labelledby': 'per-key' },
        h('h2', { id: 'per-key' }, 'By key'),
        table(
          'Usage by key',
          ['Key', 'Jobs', '', 'Failed', 'Total time', 'Upstream time'],
          u.byKey.map((k) => [
            k.source === 'playground' ? h('span', {}, badge('playground', 'info'), ' ', k.userEmail) : k.keyName,
            num(k.jobs),
            meter(k.jobs, maxKey),
            num(k.failed),
            duration(k.totalMs),
            duration(k.upstreamMs),
          ]),
          { captionHidden: true, testId: 'usage-by-key' },
        ),
      ),
      h(
        'section',
        { 'aria-labelledby': 'per-utility' },
        h('h2', { id: 'per-utility' }, 'By utility'),
        table(
          'Usage by utility',
          ['Utility', 'Jobs', '', 'Failed', 'Total time', 'Upstream time'],
          u.byUtility.map((x) => [
            x.utility,
            num(x.jobs),
            meter(x.jobs, maxUtil),
            num(x.failed),
            duration(x.totalMs),
            duration(x.upstreamMs),
          ]),
          { captionHidden: true, testId: 'usage-by-utility' },
        ),
      ),
    ),
    h(
      'section',
      { 'aria-labelledby': 'per-code' },
      h('h2', { id: 'per-code' }, 'Failures by error code'),
      u.byErrorCode.length
        ? table(
            'Failures by error code',
            ['Code', 'Failures', ''],
            u.byErrorCode.map((c) => [h('code', {}, c.code), num(c.count), meter(c.count, maxCode, 'bad')]),
            { captionHidden: true },
          )
        : h('p', { class: 'muted' }, 'No failures in this range.'),
    ),
  )
}
