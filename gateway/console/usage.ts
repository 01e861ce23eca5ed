import type { Client } from 'minio'
import type { Logger } from 'pino'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { effectiveStatus } from '../../contract/job-view.js'
import { readJsonObject, writeJsonObject } from '../../contract/storage-client.js'
import { utcDay } from '../../contract/time.js'

/**
 * Usage statistics: jobs per UTC day × key (or playground user) × utility, with outcomes,
 * failures by error code and time spent. A day's rows are a pure function of that day's jobs,
 * so every gateway replica computes the same thing; recent days are computed live from the
 * watched jobs and archived to storage (`usage/daily/<day>.json`), where they outlive the jobs
 * (docs/adr/0005).
 */
export interface UsageRow {
  day: string
  source: 'api' | 'playground'
  /** The key's id; empty for playground runs. */
  keyId: string
  keyName: string
  /** Who ran it from the playground; empty for key-started jobs. */
  userEmail: string
  utility: string
  jobs: number
  succeeded: number
  failed: number
  cancelled: number
  /** Failed jobs by error code. */
  errors: Record<string, number>
  /** Sum of totalMs and upstreamMs over finished jobs. */
  totalMs: number
  upstreamMs: number
}

/** Days counted live from the jobs (and rewritten in the archive while they may still change). */
export const LIVE_DAYS = 7
export const ARCHIVE_PREFIX = 'usage/daily/'

export function usageRows(jobs: readonly UtilityJobResource[]): UsageRow[] {
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
      row = { day, source, keyId, keyName: job.spec.apiKeyName, userEmail, utility: job.spec.utility, jobs: 0, succeeded: 0, failed: 0, cancelled: 0, errors: {}, totalMs: 0, upstreamMs: 0 }
      rows.set(id, row)
    }
    const s = effectiveStatus(job)
    row.jobs++
    if (s.state === 'succeeded') row.succeeded++
    if (s.state === 'cancelled') row.cancelled++
    if (s.state === 'failed') {
      row.failed++
      const code = s.error?.code ?? 'internal'
      row.errors[code] = (row.errors[code] ?? 0) + 1
    }
    row.totalMs += s.timings?.totalMs ?? 0
    row.upstreamMs += s.timings?.upstreamMs ?? 0
  }
  return [...rows.values()].sort((a, b) => a.day.localeCompare(b.day) || a.keyName.localeCompare(b.keyName) || a.utility.localeCompare(b.utility))
}

export function dayRange(fromDay: string, toDay: string): string[] {
  const out: string[] = []
  for (let t = Date.parse(`${fromDay}T00:00:00Z`); t <= Date.parse(`${toDay}T00:00:00Z`); t += 86_400_000) out.push(utcDay(t))
  return out
}

export interface UsageTotals {
  jobs: number
  succeeded: number
  failed: number
  cancelled: number
  totalMs: number
  upstreamMs: number
}

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
    if (!k) perKey.set(kid, (k = { keyId: r.keyId, keyName: r.keyName, source: r.source, userEmail: r.userEmail, ...zero() }))
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

/** Archived days in storage; recent days live from the jobs. */
export class UsageArchive {
  private readonly written = new Map<string, string>()
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly storage: Client,
    private readonly bucket: string,
    private readonly jobs: () => readonly UtilityJobResource[],
    private readonly retentionDays: number,
    private readonly log: Logger,
  ) {}

  /** Rows of the days in [fromDay, toDay]: live for recent days, archived for older ones. */
  async rows(fromDay: string, toDay: string, now = Date.now()): Promise<UsageRow[]> {
    const liveFrom = utcDay(now - (LIVE_DAYS - 1) * 86_400_000)
    const live = usageRows(this.jobs()).filter((r) => r.day >= fromDay && r.day <= toDay && r.day >= liveFrom)
    const archivedDays = dayRange(fromDay, toDay).filter((d) => d < liveFrom)
    const archived = await Promise.all(
      archivedDays.map(async (d) => {
        try {
          return ((await readJsonObject(this.storage, this.bucket, `${ARCHIVE_PREFIX}${d}.json`)) as { rows: UsageRow[] }).rows
        } catch {
          // Not archived (no jobs that day, or not rolled up yet): count what the jobs still say.
          return usageRows(this.jobs()).filter((r) => r.day === d)
        }
      }),
    )
    return [...archived.flat(), ...live]
  }

  /**
   * Writes each day that has jobs: recent days whenever they changed, older days once (they are
   * final long before their jobs expire). Deletes archived days past the retention.
   */
  async rollup(now = Date.now()): Promise<void> {
    const liveFrom = utcDay(now - (LIVE_DAYS - 1) * 86_400_000)
    const byDay = new Map<string, UsageRow[]>()
    for (const r of usageRows(this.jobs())) byDay.set(r.day, [...(byDay.get(r.day) ?? []), r])
    for (const [day, rows] of byDay) {
      const content = JSON.stringify({ day, rows })
      if (this.written.get(day) === content) continue
      if (day < liveFrom && (this.written.has(day) || (await this.archived(day)))) {
        // Final: never rewritten from jobs that may have started to expire.
        this.written.set(day, content)
        continue
      }
      await writeJsonObject(this.storage, this.bucket, `${ARCHIVE_PREFIX}${day}.json`, { day, rows })
      this.written.set(day, content)
    }
    const oldest = `${ARCHIVE_PREFIX}${utcDay(now - this.retentionDays * 86_400_000)}.json`
    const expired: string[] = []
    for await (const obj of this.storage.listObjectsV2(this.bucket, ARCHIVE_PREFIX, true)) {
      if (obj.name && obj.name < oldest) expired.push(obj.name)
    }
    if (expired.length) await this.storage.removeObjects(this.bucket, expired)
  }

  private async archived(day: string): Promise<boolean> {
    try {
      await this.storage.statObject(this.bucket, `${ARCHIVE_PREFIX}${day}.json`)
      return true
    } catch {
      return false
    }
  }

  start(intervalMs = 5 * 60_000): void {
    const run = () => this.rollup().catch((err) => this.log.warn({ err: (err as Error).message }, 'usage rollup failed'))
    void run()
    this.timer = setInterval(run, intervalMs)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
  }
}
