import type { UsageRow } from '../../platform/db/usage-table.js'
import { effectiveStatus, type JobRecord } from '../../contract/job-view.js'
import { utcDay } from '../../contract/time.js'
import type { Totals } from './ui/api-types.js'

/**
 * Usage statistics: jobs per UTC day × key (or playground user) × utility, with outcomes,
 * failures by error code and time spent. Kept in the job record as a per-day aggregate, updated
 * when a job is accepted and when it finishes (platform/db/usage-table.ts), for 400 days:
 * the usage page reads the days it shows and never scans jobs (docs/adr/0010).
 * `usageRows` is the same aggregate computed from jobs: tests hold the table to it.
 */
export type { UsageRow }

export function usageRows(jobs: readonly JobRecord[]): UsageRow[] {
  const rows = new Map<string, UsageRow>()
  for (const job of jobs) {
    const created = Date.parse(job.spec.createdAt)
    if (Number.isNaN(created)) continue
    const day = utcDay(created)
    const source = job.spec.source ?? 'api'
    const keyId = job.spec.apiKeyId
    const userEmail = source === 'playground' ? (job.spec.userEmail ?? '') : ''
    const id = [day, source, keyId, userEmail, job.spec.utility].join('\n')
    let row = rows.get(id)
    if (!row) {
      row = {
        day,
        source,
        keyId,
        keyName: job.spec.apiKeyName,
        userEmail,
        utility: job.spec.utility,
        jobs: 0,
        succeeded: 0,
        failed: 0,
        cancelled: 0,
        errors: {},
        totalMs: 0,
        upstreamMs: 0,
        outputBytes: 0,
      }
      rows.set(id, row)
    }
    const s = effectiveStatus(job)
    row.jobs++
    if (s.state === 'succeeded') {
      row.succeeded++
      row.outputBytes += (s.result?.files ?? []).reduce((n, f) => n + (f.size ?? 0), 0)
    }
    if (s.state === 'cancelled') row.cancelled++
    if (s.state === 'failed') {
      row.failed++
      const code = s.error?.code ?? 'internal'
      row.errors[code] = (row.errors[code] ?? 0) + 1
    }
    row.totalMs += s.timings?.totalMs ?? 0
    row.upstreamMs += s.timings?.upstreamMs ?? 0
  }
  return [...rows.values()].sort(
    (a, b) => a.day.localeCompare(b.day) || a.keyName.localeCompare(b.keyName) || a.utility.localeCompare(b.utility),
  )
}

export function dayRange(fromDay: string, toDay: string): string[] {
  const out: string[] = []
  for (let t = Date.parse(`${fromDay}T00:00:00Z`); t <= Date.parse(`${toDay}T00:00:00Z`); t += 86_400_000)
    out.push(utcDay(t))
  return out
}

export type UsageTotals = Totals

function add(into: UsageTotals, r: UsageTotals): void {
  into.jobs += r.jobs
  into.succeeded += r.succeeded
  into.failed += r.failed
  into.cancelled += r.cancelled
  into.totalMs += r.totalMs
  into.upstreamMs += r.upstreamMs
}
const zero = (): UsageTotals => ({ jobs: 0, succeeded: 0, failed: 0, cancelled: 0, totalMs: 0, upstreamMs: 0 })

/** The usage page's numbers: every day of the range (empty days included), per key, per utility, per error code. */
export function summarizeUsage(rows: readonly UsageRow[], days: readonly string[]) {
  const perDay = new Map(days.map((d) => [d, { day: d, ...zero() }]))
  const perKey = new Map<string, { keyId: string; keyName: string; source: string; userEmail: string } & UsageTotals>()
  const perUtility = new Map<string, { utility: string } & UsageTotals>()
  const perCode = new Map<string, number>()
  const total = zero()
  for (const r of rows) {
    const day = perDay.get(r.day)
    if (!day) continue
    add(day, r)
    add(total, r)
    const kid = r.source === 'playground' ? `playground\n${r.userEmail}` : r.keyId
    let k = perKey.get(kid)
    if (!k)
      perKey.set(kid, (k = { keyId: r.keyId, keyName: r.keyName, source: r.source, userEmail: r.userEmail, ...zero() }))
    add(k, r)
    let u = perUtility.get(r.utility)
    if (!u) perUtility.set(r.utility, (u = { utility: r.utility, ...zero() }))
    add(u, r)
    for (const [code, n] of Object.entries(r.errors)) perCode.set(code, (perCode.get(code) ?? 0) + n)
  }
  return {
    total,
    days: [...perDay.values()],
    byKey: [...perKey.values()].sort((a, b) => b.jobs - a.jobs),
    byUtility: [...perUtility.values()].sort((a, b) => b.jobs - a.jobs),
    byErrorCode: [...perCode.entries()].map(([code, count]) => ({ code, count })).sort((a, b) => b.count - a.count),
  }
}
