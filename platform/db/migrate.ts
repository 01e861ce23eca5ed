import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { runner } from 'node-pg-migrate'
import type { Database } from './database.js'

/** The versioned schema migrations (SQL files, applied in name order by node-pg-migrate). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url))
export const MIGRATIONS_TABLE = 'schema_migrations'

/** Names of the migrations this build knows, oldest first. */
export function knownMigrations(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.replace(/\.sql$/, ''))
    .sort()
}

export interface MigrateLog {
  info(obj: object, msg: string): void
}

/**
 * Applies every pending migration, each in its own transaction, under node-pg-migrate's advisory
 * lock: a second caller (an operator that took over mid-way) retries until the first is done
 * rather than running them twice. The operator's leader runs this on taking the lease
 * (docs/adr/0010).
 */
export async function migrateDatabase(url: string, log: MigrateLog, attempts = 30): Promise<string[]> {
  for (let i = 1; ; i++) {
    try {
      return await migrateOnce(url, log)
    } catch (err) {
      if (i >= attempts || !/Another migration is already running/.test((err as Error).message)) throw err
      await new Promise((r) => setTimeout(r, 1000))
    }
  }
}

async function migrateOnce(url: string, log: MigrateLog): Promise<string[]> {
  const applied = await runner({
    // Bounded: a connect whose packets are dropped (a NetworkPolicy not yet applied to a new pod,
    // a database that moved) fails within seconds and the caller retries, instead of waiting out
    // TCP's retries; a query on a connection whose server vanished fails after two minutes
    // (longer than any of these migrations takes) instead of never.
    databaseUrl: { connectionString: url, connectionTimeoutMillis: 5000, query_timeout: 120_000 },
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: MIGRATIONS_TABLE,
    singleTransaction: false,
    checkOrder: true,
    verbose: false,
    log: () => {},
    logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  })
  const names = applied.map((m) => m.name)
  if (names.length) log.info({ migrations: names }, 'database migrated')
  return names
}

/** Migrations this build needs that the database does not have yet (the gateway is not ready until none). */
export async function pendingMigrations(db: Database): Promise<string[]> {
  const known = knownMigrations()
  let done: Set<string>
  try {
    const res = await db.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`)
    done = new Set(res.rows.map((r) => r.name))
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return known // no migrations table yet
    throw err
  }
  return known.filter((n) => !done.has(n))
}
