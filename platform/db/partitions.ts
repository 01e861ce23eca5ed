import { utcDay } from '../../contract/time.js'
import type { Queryable } from './database.js'

/**
 * Daily partitions of `jobs` (by creation time, UTC). The operator's leader keeps the next days
 * made ahead; a gateway that meets a missing one (an operator down for days) makes it on demand.
 * Expiry drops whole partitions: constant time, no vacuum storm.
 */
export const PARTITION_PREFIX = 'jobs_p'
const DAY_MS = 86_400_000

export function partitionName(day: string): string {
  return `${PARTITION_PREFIX}${day.replaceAll('-', '')}`
}

export function dayOfPartition(name: string): string | null {
  const m = /^jobs_p(\d{4})(\d{2})(\d{2})$/.exec(name)
  return m ? `${m[1]}-${m[2]}-${m[3]}` : null
}

const nextDay = (day: string) => utcDay(Date.parse(`${day}T00:00:00Z`) + DAY_MS)

/** Makes the partition holding `day` (no-op when it exists; safe against a concurrent maker). */
export async function ensurePartition(db: Queryable, day: string): Promise<void> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`not a day: ${day}`)
  const sql = `CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF jobs FOR VALUES FROM ('${day}T00:00:00Z') TO ('${nextDay(day)}T00:00:00Z')`
  try {
    await db.query(sql)
  } catch (err) {
    // Two makers at once: one wins, the other sees the type or relation it just made.
    const code = (err as { code?: string }).code
    if (code !== '23505' && code !== '42P07') throw err
  }
}

/** Makes the partitions from `fromDay` for `days` days. */
export async function ensurePartitions(db: Queryable, fromMs: number, days: number): Promise<void> {
  for (let i = 0; i < days; i++) await ensurePartition(db, utcDay(fromMs + i * DAY_MS))
}

/** Days of the existing partitions, oldest first. */
export async function partitionDays(db: Queryable): Promise<string[]> {
  const res = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'jobs'`,
  )
  return res.rows
    .map((r) => dayOfPartition(r.name))
    .filter((d): d is string => d !== null)
    .sort()
}

/** Drops one day's partition (its rows are gone at once). */
export async function dropPartition(db: Queryable, day: string): Promise<void> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`not a day: ${day}`)
  await db.query(`DROP TABLE IF EXISTS ${partitionName(day)}`)
}
