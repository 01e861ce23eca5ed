import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'

/**
 * Debian's PostgreSQL server for the local platform: a cluster of our own (initdb) under the
 * state directory, on its own loopback port, password authentication, database `dutil`.
 */
export const DATABASE = 'dutil'
export const DATABASE_USER = 'dutil'

export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'postgres'))) : []
  if (!versions.length)
    throw new Error(
      'PostgreSQL server not found under /usr/lib/postgresql: run test/platform/install-deps.sh (make deps)',
    )
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin')
}

/**
 * argv prefix that runs a PostgreSQL program. PostgreSQL refuses to run as root; as root it runs
 * in a user namespace of its own where it is `nobody` (65534) while its files stay root's on the
 * host: no system account is needed and the checkout may live anywhere (under a 0700 /root too).
 */
export function asServerUser(): string[] {
  return process.getuid?.() === 0 ? ['unshare', '--user', '--map-user=65534', '--map-group=65534', '--'] : []
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
export function preparePostgres(
  stateDir: string,
  port: number,
  opts: { durable: boolean; nodeAddress?: string; podCidr?: string },
): PostgresInstance {
  const bin = postgresBinDir()
  const dataDir = join(stateDir, 'postgres')
  const pwFile = join(stateDir, 'postgres-password')
  if (!existsSync(pwFile)) writeFileSync(pwFile, randomBytes(18).toString('hex'), { mode: 0o600 })
  const password = readFileSync(pwFile, 'utf8').trim()
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    rmSync(dataDir, { recursive: true, force: true })
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    const initPw = join(stateDir, '.postgres-initdb-password')
    writeFileSync(initPw, password, { mode: 0o600 })
    const [cmd, ...prefix] = [...asServerUser(), join(bin, 'initdb')]
    const res = spawnSync(
      cmd,
      [
        ...prefix,
        '-D',
        dataDir,
        '-U',
        DATABASE_USER,
        `--pwfile=${initPw}`,
        '--auth-local=scram-sha-256',
        '--auth-host=scram-sha-256',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-instructions',
      ],
      { encoding: 'utf8' },
    )
    rmSync(initPw, { force: true })
    if (res.status !== 0) throw new Error(`initdb failed: ${res.stderr || res.stdout}`)
  }
  chmodSync(dataDir, 0o700)
  if (opts.podCidr) {
    // The real node's pods connect from their own addresses (initdb allows loopback only).
    const hba = join(dataDir, 'pg_hba.conf')
    const line = `host all all ${opts.podCidr} scram-sha-256`
    if (!readFileSync(hba, 'utf8').includes(line)) appendFileSync(hba, `${line}\n`)
  }
  const settings = [
    `port=${port}`,
    `listen_addresses=${['127.0.0.1', ...(opts.nodeAddress ? [opts.nodeAddress] : [])].join(',')}`,
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
    const client = new pg.Client({
      host: '127.0.0.1',
      port: inst.port,
      user: DATABASE_USER,
      password: inst.password,
      database: 'postgres',
      connectionTimeoutMillis: 2000,
    })
    try {
      await client.connect()
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])
      if (!exists.rowCount) await client.query(`CREATE DATABASE ${DATABASE}`)
      return
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`PostgreSQL did not answer on port ${inst.port}: ${(err as Error).message}`)
      await new Promise((r) => setTimeout(r, 200))
    } finally {
      await client.end().catch(() => {})
    }
  }
}
