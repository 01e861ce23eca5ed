import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'

/**
 * Debian's PostgreSQL server for the local platform: a cluster of our own (initdb) under the
 * state directory, on its own loopback port, password authentication, database `dutil`. As
 * root, the server runs as Debian's `postgres` user (PostgreSQL refuses to run as root), so that
 * user must be able to reach the state directory.
 */
export const DATABASE = 'dutil'
export const DATABASE_USER = 'dutil'

export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'postgres'))) : []
  if (!versions.length) throw new Error('PostgreSQL server not found under /usr/lib/postgresql: run test/platform/install-deps.sh (make deps)')
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin')
}

interface PgUser {
  uid: number
  gid: number
}

/** The account the server runs as: ourselves, or Debian's `postgres` when we are root. */
function serverUser(): PgUser | undefined {
  if (process.getuid?.() !== 0) return undefined
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
  return { uid, gid }
}

/** argv prefix that runs a command as the server's account. */
export function asServerUser(): string[] {
  return serverUser() ? ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--'] : []
}

export interface PostgresInstance {
  dataDir: string
  port: number
  password: string
  url: string
  /** argv of the server process, for the supervisor. */
  command: string[]
}

/** Prepares (initdb once) the cluster under `stateDir/postgres`; returns how to start it. */
export function preparePostgres(stateDir: string, port: number, opts: { durable: boolean }): PostgresInstance {
  const bin = postgresBinDir()
  const dataDir = join(stateDir, 'postgres')
  const pwFile = join(stateDir, 'postgres-password')
  const user = serverUser()
  if (!existsSync(pwFile)) writeFileSync(pwFile, randomBytes(18).toString('hex'), { mode: 0o600 })
  const password = readFileSync(pwFile, 'utf8').trim()
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    rmSync(dataDir, { recursive: true, force: true })
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    const initPw = join(stateDir, '.postgres-initdb-password')
    writeFileSync(initPw, password, { mode: 0o600 })
    if (user) {
      chownSync(dataDir, user.uid, user.gid)
      chownSync(initPw, user.uid, user.gid)
      const reach = spawnSync('setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', 'test', '-w', dataDir])
      if (reach.status !== 0) {
        rmSync(initPw, { force: true })
        throw new Error(`PostgreSQL runs as the postgres user, which cannot reach ${dataDir}: give it search (x) permission on every parent directory of the checkout, or move the checkout (e.g. under /tmp)`)
      }
    }
    const res = spawnSync(asServerUser()[0] ?? join(bin, 'initdb'), [
      ...asServerUser().slice(1),
      ...(user ? [join(bin, 'initdb')] : []),
      '-D', dataDir, '-U', DATABASE_USER, `--pwfile=${initPw}`, '--auth-local=scram-sha-256', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-instructions',
    ], { encoding: 'utf8' })
    rmSync(initPw, { force: true })
    if (res.status !== 0) throw new Error(`initdb failed: ${res.stderr || res.stdout}`)
  }
  if (user) chmodSync(dataDir, 0o700)
  const settings = [
    `port=${port}`,
    'listen_addresses=127.0.0.1',
    // TCP only: no socket file in a shared directory.
    'unix_socket_directories=',
    'max_connections=200',
    'shared_buffers=128MB',
    // Tests throw the cluster away after the run: a machine crash need not be survived, a
    // server crash (the restart tests) still is: commits wait for the WAL write either way.
    ...(opts.durable ? [] : ['fsync=off', 'full_page_writes=off']),
    'log_min_messages=warning',
  ].flatMap((s) => ['-c', s])
  const serverArgv = [join(bin, 'postgres'), '-D', dataDir, ...settings]
  return {
    dataDir,
    port,
    password,
    url: `postgres://${DATABASE_USER}:${password}@127.0.0.1:${port}/${DATABASE}`,
    command: [...asServerUser(), ...serverArgv],
  }
}

/** Waits until the server answers, then makes the `dutil` database when it is missing. */
export async function ensureDatabase(inst: PostgresInstance, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const client = new pg.Client({ host: '127.0.0.1', port: inst.port, user: DATABASE_USER, password: inst.password, database: 'postgres', connectionTimeoutMillis: 2000 })
    try {
      await client.connect()
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])
      if (!exists.rowCount) await client.query(`CREATE DATABASE ${DATABASE}`)
      return
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not answer on port ${inst.port}: ${(err as Error).message}`)
      await new Promise((r) => setTimeout(r, 200))
    } finally {
      await client.end().catch(() => {})
    }
  }
}
