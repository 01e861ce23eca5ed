import { inTransaction, type Database, type Queryable } from './database.js'
import type { JobRow } from './job-row.js'
import { ownerOfJob } from '../../contract/owners.js'

/**
 * The `queued_counts` table: how many jobs wait to start, for the whole platform, per owner and
 * per API key. Each count changes in the transaction that moves a job's row into or out of
 * `queued` (platform/db/jobs-table.ts), so a ceiling check reads one row, whatever the depth of
 * the queue (a job leaving the queue is counted by the `job_transition` function, migration
 * 0008, in the same order). Locks are always taken in one order (owner, key, then the platform row last and
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
 * Every count recomputed from the rows themselves, and corrected where it drifted (rows written
 * by a program that did not count them, an undercount hidden by `greatest(0, …)`): the table is
 * locked against every writer of a count for the two statements (writers wait a few
 * milliseconds), so no transition is counted twice or lost. A writer that changed a row but had
 * not yet counted it waits on the lock; its row is not yet visible here, and its own delta
 * follows the correction. Returns the drift found: the sum of each count's difference.
 */
export async function recountQueued(db: Database): Promise<{ drift: number; corrected: number }> {
  return inTransaction(db, async (client) => {
    await client.query('LOCK TABLE queued_counts IN EXCLUSIVE MODE')
    const res = await client.query<{ scope: string; stored: number; actual: number }>({
      name: 'queued_counts_recount',
      text: RECOUNT,
    })
    let drift = 0
    for (const r of res.rows) drift += Math.abs(r.stored - r.actual)
    const wrong = res.rows.filter((r) => r.stored !== r.actual)
    if (wrong.length)
      await client.query(
        `INSERT INTO queued_counts AS q (scope, n) SELECT * FROM unnest($1::text[], $2::int[])
         ON CONFLICT (scope) DO UPDATE SET n = EXCLUDED.n`,
        [wrong.map((r) => r.scope), wrong.map((r) => r.actual)],
      )
    return { drift, corrected: wrong.length }
  })
}

/** The owner a row counts against, in SQL: the rule of ownerOfRow (contract/owners.ts ownerOfJob). */
const OWNER_SQL = `coalesce(owner, CASE WHEN api_key_id <> '' THEN 'key:' || api_key_id ELSE 'owner:' || lower(trim(coalesce(user_email, ''))) END)`

/** Each scope's stored count beside the count of its queued rows (scopes with neither are left out). */
const RECOUNT = `
WITH queued AS (SELECT api_key_id, ${OWNER_SQL} AS owner FROM jobs WHERE state = 'queued'),
actual AS (
  SELECT 'platform' AS scope, count(*)::int AS n FROM queued
  UNION ALL SELECT 'owner/' || owner, count(*)::int FROM queued GROUP BY owner
  UNION ALL SELECT 'key/' || api_key_id, count(*)::int FROM queued WHERE api_key_id <> '' GROUP BY api_key_id
)
SELECT coalesce(a.scope, q.scope) AS scope, coalesce(q.n, 0) AS stored, coalesce(a.n, 0) AS actual
FROM actual a FULL JOIN queued_counts q ON q.scope = a.scope
WHERE coalesce(q.n, 0) <> 0 OR coalesce(a.n, 0) <> 0`
