import type { DayPoint } from './api-types.js'
import { h, svg } from './dom.js'
import { day, duration, num } from './format.js'

function niceMax(v: number): number {
  if (v <= 4) return 4
  const p = 10 ** Math.floor(Math.log10(v))
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p
  return 10 * p
}

/**
 * Jobs per day as stacked bars (succeeded, failed, other), inline SVG. Screen readers get a
 * summary and the same numbers as a table below it.
 */
export function jobsPerDayChart(points: readonly DayPoint[], title: string): HTMLElement {
  const W = 760
  const H = 240
  const pad = { left: 44, right: 12, top: 12, bottom: 34 }
  const max = niceMax(Math.max(0, ...points.map((p) => p.jobs)))
  const plotW = W - pad.left - pad.right
  const plotH = H - pad.top - pad.bottom
  const slot = plotW / Math.max(1, points.length)
  const barW = Math.max(2, Math.min(28, slot * 0.7))
  const y = (v: number) => pad.top + plotH - (v / max) * plotH
  const labelEvery = Math.ceil(points.length / 10)
  const total = points.reduce((a, p) => a + p.jobs, 0)
  const failed = points.reduce((a, p) => a + p.failed, 0)
  const summaryId = `chart-${Math.random().toString(36).slice(2, 8)}`
  const grid = [0, max / 2, max].map((v) =>
    svg(
      'g',
      {},
      svg('line', { x1: pad.left, x2: W - pad.right, y1: y(v), y2: y(v), class: 'grid' }),
      svg('text', { x: pad.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, num(v)),
    ),
  )
  const bars = points.map((p, i) => {
    const x = pad.left + i * slot + (slot - barW) / 2
    const other = p.jobs - p.succeeded - p.failed
    const parts: Array<[number, string]> = [
      [p.succeeded, 'bar-ok'],
      [p.failed, 'bar-bad'],
      [other, 'bar-other'],
    ]
    let base = 0
    const rects = parts
      .filter(([v]) => v > 0)
      .map(([v, cls]) => {
        const r = svg('rect', {
          x,
          width: barW,
          y: y(base + v),
          height: Math.max(1, y(base) - y(base + v)),
          class: cls,
        })
        base += v
        return r
      })
    const label =
      i % labelEvery === 0
        ? svg('text', { x: x + barW / 2, y: H - pad.bottom + 16, 'text-anchor': 'middle', class: 'axis' }, day(p.day))
        : null
    return svg(
      'g',
      { 'data-day': p.day, 'data-jobs': p.jobs },
      svg('title', {}, `${day(p.day)}: ${p.jobs} jobs, ${p.succeeded} succeeded, ${p.failed} failed`),
      rects,
      label,
    )
  })
  const figure = h(
    'figure',
    { class: 'chart' },
    svg(
      'svg',
      {
        viewBox: `0 0 ${W} ${H}`,
        role: 'img',
        'aria-labelledby': summaryId,
        'data-testid': 'jobs-chart',
        preserveAspectRatio: 'xMidYMid meet',
      },
      grid,
      bars,
    ),
    h(
      'figcaption',
      { id: summaryId },
      h(
        'span',
        { class: 'visually-hidden' },
        `${title}: ${num(total)} jobs over ${points.length} days, ${num(failed)} failed.`,
      ),
      h(
        'span',
        { class: 'legend' },
        h('span', { class: 'swatch bar-ok' }),
        'Succeeded',
        h('span', { class: 'swatch bar-bad' }),
        'Failed',
        h('span', { class: 'swatch bar-other' }),
        'Cancelled or in progress',
      ),
    ),
  )
  const details = h(
    'details',
    { class: 'chart-table' },
    h('summary', {}, 'Show the numbers as a table'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        {},
        h('caption', { class: 'visually-hidden' }, title),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Day', 'Jobs', 'Succeeded', 'Failed', 'Total time', 'Upstream time'].map((x) =>
              h('th', { scope: 'col' }, x),
            ),
          ),
        ),
        h(
          'tbody',
          {},
          points
            .filter((p) => p.jobs > 0)
            .map((p) =>
              h(
                'tr',
                {},
                [
                  day(p.day),
                  num(p.jobs),
                  num(p.succeeded),
                  num(p.failed),
                  duration(p.totalMs),
                  duration(p.upstreamMs),
                ].map((c) => h('td', {}, c)),
              ),
            ),
        ),
      ),
    ),
  )
  return h('div', {}, figure, details)
}

/** A proportion bar for table cells (width set through CSSOM, which the CSP allows). */
export function meter(value: number, max: number, tone = 'ok'): HTMLElement {
  const fill = h('span', { class: `meter-fill bar-${tone}` })
  fill.style.width = `${max > 0 ? Math.max(2, (value / max) * 100) : 0}%`
  return h('span', { class: 'meter', 'aria-hidden': 'true' }, fill)
}
