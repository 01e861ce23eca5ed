import { createHash } from 'node:crypto'
import type { CallbackAttemptEntry, CallbackDelivery } from '../../contract/crd-schemas.js'
import { TERMINAL_STATES } from '../../contract/crd-schemas.js'
import { inTransaction, NO_PARTITION, storableJson, storableValue, type Database, type Queryable } from './database.js'
import { createdAtOfJobId, JOB_COLUMNS, recordOf, rowOf, type JobRecord, type JobRow } from './job-row.js'
import { utcDay } from '../../contract/time.js'
import { ensurePartition } from './partitions.js'
import { countAccepted, countFinished, finishedUsage } from './usage-table.js'
import { countPlatformQueued, countQueued, queuedIn } from './queued-counts.js'

/** The `jobs` table: every query the gateway and the operator make of the job record. */

const COLUMN_LIST = JOB_COLUMNS.join(', ')
const PLACEHOLDERS = JOB_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')
/** The columns of the server's own JSON (jsonb); metadata is the client's, kept as text. */
const JSON_COLUMNS = new Set<keyof JobRow>(['result', 'error', 'callback', 'progress'])
/** A column's value as it is written: metadata as verbatim JSON text, the server's JSON as jsonb. */
function columnValue(row: JobRow, c: keyof JobRow): unknown {
  if (c === 'metadata') return row.metadata === null ? null : JSON.stringify(row.metadata)
  if (JSON_COLUMNS.has(c)) return storableJson(row[c])
  return row[c]
}
const values = (row: JobRow) => JOB_COLUMNS.map((c) => columnValue(row, c))
/** A row as read: metadata parsed back from its text. */
const fromDb = (r: JobRow): JobRecord =>
  recordOf({ ...r, metadata: r.metadata === null ? null : JSON.parse(r.metadata as unknown as string) })

/**
 * A named (prepared) statement: planning a query over every day's partition costs ~5 ms a time,
 * far more than running it (~0.5 ms); a prepared statement is planned once per connection and
 * then runs on its cached generic plan (docs/benchmarks.md, job record). The name is the text's
 * hash, so each filter combination is its own statement.
 */
function prepared(text: string, values: unknown[]): { name: string; text: string; values: unknown[] } {
  return { name: `j_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text, values }
}

/** Runs `fn`, making the partition of `createdAt` first when the row has none. */
async function withPartition<T>(db: Database, createdAt: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if ((err as { code?: string }).code !== NO_PARTITION) throw err
    await ensurePartition(db, utcDay(Date.parse(createdAt)))
    return fn()
  }
}

export type CeilingScope = 'owner' | 'key' | 'platform'

export type AcceptOutcome =
  | { kind: 'inserted' }
  | { kind: 'existing'; jobId: string }
  | { kind: 'over_ceiling'; queued: number; scope: CeilingScope }

/** Thrown inside the accept transaction to roll it back (the Idempotency-Key claim with it). */
class OverCeiling extends Error {
  constructor(
    readonly queued: number,
    readonly scope: CeilingScope,
  ) {
    super('queued-job ceiling reached')
  }
}

export interface QueuedCeilings {
  /** Queued jobs one owner may have across its keys and playground runs. */
  maxQueuedPerOwner?: number
  /** Queued jobs one API key may have. */
  maxQueuedPerKey?: number
  /** Queued jobs the platform takes (a soft bound: concurrent accepts may pass it by a few). */
  maxQueuedTotal?: number
}

/**
 * Writes a job the gateway is accepting, before it answers: its row, its Idempotency-Key (when
 * given), the queued counts and the day's accepted count, in one transaction. A key already used
 * by this API key hands back the job that holds it instead (concurrent requests wait on the
 * unique key; the first to commit wins). The ceilings read the queued counts
 * (platform/db/queued-counts.ts): one row each, never a count of the queue. `beforeCommit` (the
 * job's input, written to storage) runs only once every decision went the job's way, inside the
 * transaction: a refused request or the loser of an Idempotency-Key race writes nothing, and a
 * failed write leaves no row.
 */
export async function insertAccepted(
  db: Database,
  job: JobRecord,
  opts: QueuedCeilings & { beforeCommit?: () => Promise<void> } = {},
): Promise<AcceptOutcome> {
  const row = rowOf(job)
  const queued = row.state === 'queued'
  try {
    return await withPartition(db, row.created_at, () =>
      inTransaction(db, async (c) => {
        if (row.idempotency_key_hash !== null) {
          const claimed = await c.query(
            'INSERT INTO idempotency_keys (api_key_id, key_hash, job_id, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING job_id',
            [row.api_key_id, row.idempotency_key_hash, row.id, row.created_at],
          )
          if (claimed.rowCount === 0) {
            const holder = await findIdempotent(c, row.api_key_id, row.idempotency_key_hash)
            if (holder) return { kind: 'existing', jobId: holder }
            throw new Error('idempotency key conflict without a holder')
          }
        }
        if (queued) {
          // The owner's and the key's counts are locked until commit: exact ceilings.
          const before = await countQueued(c, row)
          if (opts.maxQueuedPerKey !== undefined && before.key !== undefined && before.key >= opts.maxQueuedPerKey)
            throw new OverCeiling(before.key, 'key')
          if (opts.maxQueuedPerOwner !== undefined && before.owner >= opts.maxQueuedPerOwner)
            throw new OverCeiling(before.owner, 'owner')
          // The platform-wide ceiling protects the cluster (etcd holds every unfinished job).
          if (opts.maxQueuedTotal !== undefined) {
            const all = await queuedIn(c, 'platform')
            if (all >= opts.maxQueuedTotal) throw new OverCeiling(all, 'platform')
          }
        }
        await c.query(`INSERT INTO jobs (${COLUMN_LIST}) VALUES (${PLACEHOLDERS})`, values(row))
        await countAccepted(c, job)
        await opts.beforeCommit?.()
        if (queued) await countPlatformQueued(c)
        return { kind: 'inserted' } as const
      }),
    )
  } catch (err) {
    if (err instanceof OverCeiling) return { kind: 'over_ceiling', queued: err.queued, scope: err.scope }
    throw err
  }
}

/** The job that an API key's Idempotency-Key (hash) created, if any. */
export async function findIdempotent(db: Queryable, apiKeyId: string, keyHash: string): Promise<string | undefined> {
  const res = await db.query<{ job_id: string }>(
    'SELECT job_id FROM idempotency_keys WHERE api_key_id = $1 AND key_hash = $2',
    [apiKeyId, keyHash],
  )
  return res.rows[0]?.job_id
}

/**
 * Writes the state a job is moving to (the operator, before it writes the status subresource):
 * one statement, `job_transition` (migration 0008), which locks the row, moves the queued counts
 * it leaves, writes it forward only and counts its usage the first time it turns final. Creates
 * the row when there is none (a job accepted before the job record existed: the upgrade path).
 * Returns whether the row changed.
 */
export async function recordTransition(db: Database, job: JobRecord, again = true): Promise<boolean> {
  const row = rowOf(job)
  const terminal = TERMINAL_STATES.includes(row.state)
  const res = await db.query<{ outcome: 'missing' | 'changed' | 'unchanged' }>({
    name: 'job_transition',
    text: 'SELECT job_transition($1::jsonb, $2::jsonb) AS outcome',
    values: [transitionRow(row), terminal ? JSON.stringify(finishedUsage(job)) : null],
  })
  const outcome = res.rows[0].outcome
  if (outcome !== 'missing') return outcome === 'changed'
  const inserted = await withPartition(db, row.created_at, () =>
    inTransaction(db, async (c) => {
      const prev = await c.query('SELECT 1 FROM jobs WHERE created_at = $1 AND id = $2 FOR UPDATE', [
        row.created_at,
        row.id,
      ])
      if (prev.rowCount) return false // written meanwhile
      if (row.state === 'queued') await countQueued(c, row)
      await c.query(`INSERT INTO jobs (${COLUMN_LIST}) VALUES (${PLACEHOLDERS})`, values(row))
      if (terminal) await countFinished(c, job, true)
      else await countAccepted(c, job)
      if (row.state === 'queued') await countPlatformQueued(c)
      return true
    }),
  )
  // Another writer made the row meanwhile: this transition moves it as any other.
  return inserted || (again && recordTransition(db, job, false))
}

/** The row as `job_transition` takes it: JSON, metadata as its verbatim text, the server's JSON cleaned for jsonb. */
function transitionRow(row: JobRow): string {
  const out: Record<string, unknown> = {}
  for (const c of JOB_COLUMNS) out[c] = JSON_COLUMNS.has(c) ? storableValue(row[c]) : columnValue(row, c)
  return JSON.stringify(out)
}

/** Records the callback delivery bookkeeping of a job (the callback controller, after each attempt). */
export async function recordCallback(db: Database, jobId: string, delivery: CallbackDelivery): Promise<void> {
  const createdAt = createdAtOfJobId(jobId)
  if (!createdAt) throw new Error(`not a job id: ${jobId}`)
  await db.query('UPDATE jobs SET callback = $3, updated_at = now() WHERE created_at = $1 AND id = $2', [
    createdAt,
    jobId,
    storableJson(delivery),
  ])
}

/** Attempts kept per job in the delivery log (8 per round; redeliveries are limited to fit). */
export const CALLBACK_LOG_MAX = 100

/** Appends one attempt to a job's callback delivery log, keeping the newest CALLBACK_LOG_MAX. */
export async function appendCallbackAttempt(db: Queryable, jobId: string, entry: CallbackAttemptEntry): Promise<void> {
  const createdAt = createdAtOfJobId(jobId)
  if (!createdAt) throw new Error(`not a job id: ${jobId}`)
  await db.query(
    `UPDATE jobs SET callback_log = (
       SELECT coalesce(jsonb_agg(e ORDER BY i), '[]'::jsonb) FROM jsonb_array_elements(coalesce(callback_log, '[]'::jsonb) || jsonb_build_array($3::jsonb)) WITH ORDINALITY AS t(e, i)
       WHERE i > jsonb_array_length(coalesce(callback_log, '[]'::jsonb)) + 1 - $4
     ), updated_at = now() WHERE created_at = $1 AND id = $2`,
    [createdAt, jobId, JSON.stringify(entry), CALLBACK_LOG_MAX],
  )
}

/** A job's callback delivery log, oldest attempt first (empty when none was made). */
export async function getCallbackLog(db: Queryable, jobId: string): Promise<CallbackAttemptEntry[]> {
  const createdAt = createdAtOfJobId(jobId)
  if (!createdAt) return []
  const res = await db.query<{ callback_log: CallbackAttemptEntry[] | null }>(
    'SELECT callback_log FROM jobs WHERE created_at = $1 AND id = $2',
    [createdAt, jobId],
  )
  return res.rows[0]?.callback_log ?? []
}

/** Marks a job failed that could not be handed to the cluster (its UtilityJob was never created). */
export async function failUnstarted(
  db: Database,
  job: JobRecord,
  error: { code: string; message: string },
  now: number,
): Promise<void> {
  const created = Date.parse(job.spec.createdAt)
  await recordTransition(db, {
    spec: job.spec,
    status: {
      state: 'failed',
      startedAt: null,
      finishedAt: new Date(now).toISOString(),
      timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: now - created },
      result: null,
      error,
    },
  })
}

/** One job's record by its public id (the id carries its creation time: one partition is read). */
export async function getJob(db: Queryable, jobId: string): Promise<JobRecord | undefined> {
  const createdAt = createdAtOfJobId(jobId)
  if (!createdAt) return undefined
  const res = await db.query<JobRow>(
    prepared(`SELECT ${COLUMN_LIST} FROM jobs WHERE created_at = $1 AND id = $2`, [createdAt, jobId]),
  )
  return res.rows[0] ? fromDb(res.rows[0]) : undefined
}

export interface JobListQuery {
  /** One API key's jobs; absent: every key's (the console's admins). */
  apiKeyId?: string
  /** Only playground runs (of this person, when given). */
  playground?: { userEmail?: string }
  /** Jobs of these keys or this person's playground runs (a console member's own jobs). */
  ownedBy?: { apiKeyIds: readonly string[]; userEmail: string }
  utility?: string
  state?: string
  /** Created on or after / before these instants. */
  createdFrom?: string
  createdBefore?: string
  /** Keyset: only jobs older than this (created_at, id). */
  after?: { createdAt: string; id: string }
  limit: number
}

/**
 * A page of jobs, newest first, by keyset on (created_at, id): never OFFSET, so a page deep in a
 * long history costs what the first does, and jobs arriving or expiring between pages never
 * shift a later page. Returns up to limit + 1 rows: the extra one says whether there is more.
 */
export async function listJobs(db: Queryable, q: JobListQuery): Promise<JobRecord[]> {
  const where: string[] = []
  const args: unknown[] = []
  const arg = (v: unknown) => {
    args.push(v)
    return `$${args.length}`
  }
  if (q.apiKeyId !== undefined) where.push(`api_key_id = ${arg(q.apiKeyId)}`)
  if (q.playground) {
    where.push(`source = 'playground'`)
    if (q.playground.userEmail !== undefined) where.push(`user_email = ${arg(q.playground.userEmail)}`)
  }
  if (q.ownedBy) {
    where.push(
      `(api_key_id = ANY(${arg(q.ownedBy.apiKeyIds)}) OR (source = 'playground' AND user_email = ${arg(q.ownedBy.userEmail)}))`,
    )
  }
  if (q.utility !== undefined) where.push(`utility = ${arg(q.utility)}`)
  if (q.state !== undefined) where.push(`state = ${arg(q.state)}`)
  if (q.createdFrom !== undefined) where.push(`created_at >= ${arg(q.createdFrom)}`)
  if (q.createdBefore !== undefined) where.push(`created_at < ${arg(q.createdBefore)}`)
  if (q.after) where.push(`(created_at, id) < (${arg(q.after.createdAt)}, ${arg(q.after.id)})`)
  const sql = `SELECT ${COLUMN_LIST} FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${arg(q.limit + 1)}`
  const res = await db.query<JobRow>(prepared(sql, args))
  return res.rows.map(fromDb)
}

/**
 * Ids of rows still queued or running that were created before `beforeMs`, oldest first, a page
 * after the keyset `after` (the operator's sweep for lost hand-offs walks every page: a deep
 * queue of jobs that did reach the cluster hides none behind it).
 */
export async function openJobIdsCreatedBefore(
  db: Queryable,
  beforeMs: number,
  after: { createdAt: string; id: string } | undefined,
  limit = 1000,
): Promise<Array<{ id: string; createdAt: string }>> {
  const res = await db.query<{ id: string; created_at: string }>({
    name: 'jobs_open_ids_before',
    text: `SELECT id, created_at FROM jobs WHERE state IN ('queued', 'running') AND created_at < $1
           AND (created_at, id) > ($2::timestamptz, $3) ORDER BY created_at, id LIMIT $4`,
    values: [new Date(beforeMs).toISOString(), after?.createdAt ?? '-infinity', after?.id ?? '', limit],
  })
  return res.rows.map((r) => ({ id: r.id, createdAt: r.created_at }))
}

/** Storage keys of one day's jobs (inputs and outputs), read before the day's partition is dropped. */
export async function storedKeysOfDay(db: Queryable, day: string): Promise<{ jobIds: string[]; keys: string[] }> {
  const res = await db.query<{ id: string; input_key: string; result: JobRow['result'] }>(
    `SELECT id, input_key, result FROM jobs WHERE created_at >= $1 AND created_at < $2`,
    [`${day}T00:00:00Z`, new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString()],
  )
  const keys: string[] = []
  for (const r of res.rows) {
    keys.push(r.input_key)
    for (const f of r.result?.files ?? []) keys.push(f.key)
  }
  return { jobIds: res.rows.map((r) => r.id), keys }
}

/** Idempotency keys of jobs created before `before` (their jobs are expiring). */
export async function expireIdempotencyKeys(db: Queryable, before: string): Promise<number> {
  return (await db.query('DELETE FROM idempotency_keys WHERE created_at < $1', [before])).rowCount ?? 0
}
