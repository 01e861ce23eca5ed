import type { Queryable } from './database.js'
import type { JobRecord } from './job-row.js'
import { utcDay } from '../../contract/time.js'

/** One day × source × key (or playground user) × utility of usage, as the console shows it. */
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
  outputBytes: number
}

/** Days of usage are kept this long (the console's longest range is 365 days). */
export const USAGE_RETENTION_DAYS = 400

function dimensions(job: JobRecord): unknown[] {
  const source = job.spec.source ?? 'api'
  return [
    utcDay(Date.parse(job.spec.createdAt)),
    source,
    job.spec.apiKeyId,
    source === 'playground' ? (job.spec.userEmail ?? '') : '',
    job.spec.utility,
    job.spec.apiKeyName,
  ]
}

const UPSERT = `INSERT INTO usage_daily AS u (day, source, api_key_id, user_email, utility, api_key_name, jobs, succeeded, failed, cancelled, errors, total_ms, upstream_ms, output_bytes)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14)
  ON CONFLICT (day, source, api_key_id, user_email, utility) DO UPDATE SET
    jobs = u.jobs + EXCLUDED.jobs,
    succeeded = u.succeeded + EXCLUDED.succeeded,
    failed = u.failed + EXCLUDED.failed,
    cancelled = u.cancelled + EXCLUDED.cancelled,
    errors = (SELECT coalesce(jsonb_object_agg(k, coalesce((u.errors ->> k)::int, 0) + coalesce((EXCLUDED.errors ->> k)::int, 0)), '{}'::jsonb)
              FROM (SELECT jsonb_object_keys(u.errors) AS k UNION SELECT jsonb_object_keys(EXCLUDED.errors)) keys),
    total_ms = u.total_ms + EXCLUDED.total_ms,
    upstream_ms = u.upstream_ms + EXCLUDED.upstream_ms,
    output_bytes = u.output_bytes + EXCLUDED.output_bytes`

/** Counts a job accepted (in the transaction that writes its first row). */
export async function countAccepted(db: Queryable, job: JobRecord): Promise<void> {
  await db.query(UPSERT, [...dimensions(job), 1, 0, 0, 0, '{}', 0, 0, 0])
}

/** What a job's outcome adds to its day's usage (the row of job_transition's `p_usage`, migration 0008). */
export function finishedUsage(job: JobRecord): Record<string, unknown> {
  const s = job.status!
  const [day, source, apiKeyId, userEmail, utility, apiKeyName] = dimensions(job)
  return {
    day,
    source,
    api_key_id: apiKeyId,
    user_email: userEmail,
    utility,
    api_key_name: apiKeyName,
    succeeded: s.state === 'succeeded' ? 1 : 0,
    failed: s.state === 'failed' ? 1 : 0,
    cancelled: s.state === 'cancelled' ? 1 : 0,
    errors: s.state === 'failed' ? { [s.error?.code ?? 'internal']: 1 } : {},
    total_ms: s.timings?.totalMs ?? 0,
    upstream_ms: s.timings?.upstreamMs ?? 0,
    output_bytes: s.state === 'succeeded' ? (s.result?.files ?? []).reduce((n, f) => n + (f.size ?? 0), 0) : 0,
  }
}

/** Counts a job's outcome, once, in the transaction that first writes it terminal. */
export async function countFinished(db: Queryable, job: JobRecord, alsoAccepted: boolean): Promise<void> {
  const u = finishedUsage(job)
  await db.query(UPSERT, [
    ...dimensions(job),
    alsoAccepted ? 1 : 0,
    u.succeeded,
    u.failed,
    u.cancelled,
    JSON.stringify(u.errors),
    u.total_ms,
    u.upstream_ms,
    u.output_bytes,
  ])
}

interface UsageDbRow {
  day: string
  source: 'api' | 'playground'
  api_key_id: string
  user_email: string
  utility: string
  api_key_name: string
  jobs: number
  succeeded: number
  failed: number
  cancelled: number
  errors: Record<string, number>
  total_ms: number
  upstream_ms: number
  output_bytes: number
}

/** Usage rows of the days in [fromDay, toDay] (by the primary key's leading day: an index range). */
export async function usageRows(db: Queryable, fromDay: string, toDay: string): Promise<UsageRow[]> {
  const res = await db.query<UsageDbRow>(
    'SELECT * FROM usage_daily WHERE day BETWEEN $1 AND $2 ORDER BY day, api_key_name, utility',
    [fromDay, toDay],
  )
  return res.rows.map((r) => ({
    day: r.day,
    source: r.source,
    keyId: r.api_key_id,
    keyName: r.api_key_name,
    userEmail: r.user_email,
    utility: r.utility,
    jobs: r.jobs,
    succeeded: r.succeeded,
    failed: r.failed,
    cancelled: r.cancelled,
    errors: r.errors,
    totalMs: r.total_ms,
    upstreamMs: r.upstream_ms,
    outputBytes: r.output_bytes,
  }))
}

/** Deletes the days before `beforeDay`. */
export async function expireUsage(db: Queryable, beforeDay: string): Promise<number> {
  return (await db.query('DELETE FROM usage_daily WHERE day < $1', [beforeDay])).rowCount ?? 0
}
