import type { Queryable } from './database.js'
import type { JobRow } from './job-row.js'
import { ownerOfJob } from '../../contract/owners.js'

/**
 * The `queued_counts` table: how many jobs wait to start, for the whole platform, per owner and
 * per API key. Each count changes in the transaction that moves a job's row into or out of
 * `queued` (platform/db/jobs-table.ts), so a ceiling check reads one row, whatever the depth of
 * the queue. Locks are always taken in one order (owner, key, then the platform row last and
 * only just before commit), so accepts and transitions never deadlock, and accepts of different
 * owners never wait on each other for longer than a commit.
 */

export type QueuedScope = 'platform' | 'owner' | 'key'

/** The owner a row counts against (rows written before owners carry none: contract/owners.ts). */
export function ownerOfRow(row: Pick<JobRow, 'owner' | 'api_key_id' | 'user_email'>): string {
  return ownerOfJob({ owner: row.owner ?? undefined, apiKeyId: row.api_key_id, userEmail: row.user_email ?? undefined })
}

const ADD = `INSERT INTO queued_counts AS q (scope, n) VALUES ($1, $2) ON CONFLICT (scope) DO UPDATE SET n = greatest(0, q.n + EXCLUDED.n) RETURNING n`

/** Adds `delta` to a count (never below 0), locking its row until commit; returns the new count. */
async function add(db: Queryable, scope: string, delta: number): Promise<number> {
  return (await db.query<{ n: number }>({ name: 'queued_counts_add', text: ADD, values: [scope, delta] })).rows[0].n
}

/** A count as committed (no lock: concurrent accepts may each see room for one more). */
export async function queuedIn(db: Queryable, scope: 'platform'): Promise<number> {
  const res = await db.query<{ n: number }>({
    name: 'queued_counts_read',
    text: 'SELECT n FROM queued_counts WHERE scope = $1',
    values: [scope],
  })
  return res.rows[0]?.n ?? 0
}

/**
 * Counts one more queued job of its owner and its key (locking both counts: one owner's accepts
 * take turns, so concurrent requests cannot all see room for one more). Returns the counts
 * before this job, for the ceiling checks; the platform's follows (`countPlatformQueued`).
 */
export async function countQueued(
  db: Queryable,
  row: Pick<JobRow, 'owner' | 'api_key_id' | 'user_email'>,
): Promise<{ owner: number; key: number | undefined }> {
  const owner = (await add(db, `owner/${ownerOfRow(row)}`, 1)) - 1
  const key = row.api_key_id ? (await add(db, `key/${row.api_key_id}`, 1)) - 1 : undefined
  return { owner, key }
}

/**
 * One more (or, with -1, one fewer) queued job on the platform: the last write of the
 * transaction, so the hottest row is locked only for its commit.
 */
export async function countPlatformQueued(db: Queryable, delta: 1 | -1 = 1): Promise<void> {
  await add(db, 'platform', delta)
}

/**
 * A queued job started, finished or was cancelled: one fewer for its owner and its key (the
 * platform's count follows with `countPlatformQueued(db, -1)` at the end of the transaction).
 */
export async function countLeftQueue(
  db: Queryable,
  row: Pick<JobRow, 'owner' | 'api_key_id' | 'user_email'>,
): Promise<void> {
  await add(db, `owner/${ownerOfRow(row)}`, -1)
  if (row.api_key_id) await add(db, `key/${row.api_key_id}`, -1)
}
