import pg from 'pg'

/** A connection pool for the job record (DUTIL_DATABASE_URL). */
export type Database = pg.Pool
export type Queryable = pg.Pool | pg.PoolClient

export interface DatabaseOptions {
  url: string
  /** Connections this process may hold. */
  maxConnections?: number
  /** Name shown in pg_stat_activity. */
  applicationName: string
}

// Timestamps and bigints come back as strings; dates as 'YYYY-MM-DD' (never shifted by a time zone).
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v)
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, (v) => v)
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v))

export function openDatabase(opts: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.maxConnections ?? 10,
    application_name: opts.applicationName,
    // A request never waits long for a connection to a database that is gone.
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 15_000,
    query_timeout: 20_000,
  })
  // An idle client losing its connection (a database restart) must not crash the process.
  pool.on('error', () => {})
  return pool
}

/** Runs `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws. */
export async function inTransaction<T>(db: Database, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect()
  try {
    await client.query('BEGIN')
    const out = await fn(client)
    await client.query('COMMIT')
    return out
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    client.release()
  }
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08006'])

/**
 * Whether an error means "the database cannot be reached right now" (down, restarting, out of
 * connections) rather than a fault in the query: the caller answers 503-style and retries.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined
  if (!e) return false
  if (e.code && UNAVAILABLE_CODES.has(e.code)) return true
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connect ECONNREFUSED/i.test(e.message ?? '')
}

/** PostgreSQL's unique_violation. */
export const UNIQUE_VIOLATION = '23505'
/** "no partition of relation found for row" */
export const NO_PARTITION = '23514'
