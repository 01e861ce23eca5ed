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
    // Prepared statements run on their generic plan from the first execution: planning a query
    // over every day's partition costs more than running it (docs/benchmarks.md, job record).
    options: '-c plan_cache_mode=force_generic_plan',
  })
  // An idle client losing its connection (a database restart) must not crash the process.
  pool.on('error', () => {})
  return pool
}

/** Runs `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws. */
export async function inTransaction<T>(db: Database, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect()
  // A checked-out client whose connection drops between two queries emits 'error'; the pool
  // listens only to idle ones, and an unheard 'error' would end the process. The failed query
  // rejects anyway, which is what the caller handles.
  let broken: Error | undefined
  const ignore = (err: Error) => {
    broken = err
  }
  client.on('error', ignore)
  try {
    await client.query('BEGIN')
    const out = await fn(client)
    await client.query('COMMIT')
    return out
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => {
      broken ??= e
    })
    throw err
  } finally {
    client.off('error', ignore)
    // A broken connection is closed, not handed to the next caller.
    client.release(broken)
  }
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08006',
])

/**
 * Whether an error means "the database cannot be reached right now" (down, restarting, out of
 * connections) rather than a fault in the query: the caller answers 503-style and retries.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined
  if (!e) return false
  if (e.code && UNAVAILABLE_CODES.has(e.code)) return true
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connect ECONNREFUSED/i.test(
    e.message ?? '',
  )
}

/** The job record could not be reached: callers answer "retry shortly" instead of a plain 500. */
export class DatabaseUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the job record is unavailable: ${(cause as Error)?.message ?? String(cause)}`)
    this.name = 'DatabaseUnavailableError'
  }
}

/** Runs a database call; a connection failure becomes a DatabaseUnavailableError (other errors pass). */
export async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    throw isDatabaseUnavailable(err) ? new DatabaseUnavailableError(err) : err
  }
}

/**
 * A value as JSON PostgreSQL's jsonb accepts: NUL characters and unpaired surrogates (valid in a
 * JavaScript string, refused by jsonb) become U+FFFD, in values and keys alike. For server-made
 * values (results, errors, callback state); client metadata is stored as text, verbatim.
 */
export function storableJson(v: unknown): string | null {
  const cleaned = storableValue(v)
  return cleaned === null ? null : JSON.stringify(cleaned)
}

/** The same value, cleaned, before it is written as JSON text (for a statement that takes a whole row as JSON). */
export function storableValue(v: unknown): unknown {
  if (v === null || v === undefined) return null
  return clean(v)
}

function cleanString(s: string): string {
  return (s as string & { toWellFormed(): string }).toWellFormed().replaceAll('\u0000', '\ufffd')
}

function clean(v: unknown): unknown {
  if (typeof v === 'string') return cleanString(v)
  if (Array.isArray(v)) return v.map(clean)
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [cleanString(k), clean(x)]))
  return v
}

/** PostgreSQL's unique_violation. */
export const UNIQUE_VIOLATION = '23505'
/** "no partition of relation found for row" */
export const NO_PARTITION = '23514'
