import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node'
import { idempotencyHash } from '../../gateway/idempotency.js'
import { InputSealingKey } from '../../platform/input-sealing-key.js'
import { jobSealKey, sealDocument } from '../../platform/sealed-input.js'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  JOB_RECORD_FINALIZER,
  LABELS,
  MANAGED_BY,
  UTILITY_JOB,
} from '../../contract/api-group.js'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { openDatabase, type Database } from '../../platform/db/database.js'
import { createdAtOfJobId, JOB_COLUMNS } from '../../platform/db/job-row.js'
import {
  appendCallbackAttempt,
  CALLBACK_LOG_MAX,
  getCallbackLog,
  getJob,
  insertAccepted,
  recordTransition,
} from '../../platform/db/jobs-table.js'
import { knownMigrations, migrateDatabase, MIGRATIONS_TABLE, pendingMigrations } from '../../platform/db/migrate.js'
import { dropPartition, partitionDays } from '../../platform/db/partitions.js'
import { usageRows as usageTableRows } from '../../platform/db/usage-table.js'
import { ulid } from 'ulid'
import pino from 'pino'
import { JobRecordUpkeep, type UpkeepDeps } from '../../operator/job-record-upkeep.js'
import { newId, objectNameOf } from '../../contract/ids.js'
import { toJobView } from '../../contract/job-view.js'
import { apiStatus } from '../../platform/kube.js'
import { inputObjectKey } from '../../contract/runner-protocol.js'
import { storageClient, writeJsonObject } from '../../platform/storage-client.js'
import { isoMs } from '../../contract/time.js'
import { usageRows } from '../../gateway/console/usage.js'
import { until } from '../platform/wait-for.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { api } from './helpers/api.js'
import { createDatabase } from './helpers/database.js'
import { readJob } from './helpers/direct-jobs.js'
import { createKey, kubeConfig } from './helpers/keys.js'
import {
  killComponent,
  startComponent,
  startOperator,
  terminateComponent,
  waitForOperatorReady,
} from './helpers/processes.js'

/**
 * The job record (docs/adr/0010): PostgreSQL holds every job's row beside its short-lived
 * UtilityJob. Given the real platform (its own PostgreSQL), these tests write, read, page,
 * expire and restart it as the gateway and the operator do.
 */
let files: FileServer
let db: Database
const coords = { group: API_GROUP, version: API_VERSION, namespace: 'dutil', plural: UTILITY_JOB.plural }
const custom = () => kubeConfig().makeApiClient(CustomObjectsApi)
const fixedLink = (key: string) => ({ url: `https://files.example/${key}` })
const gone = async (name: string) => {
  try {
    await custom().getNamespacedCustomObject({ ...coords, name })
    return false
  } catch (err) {
    return apiStatus(err) === 404
  }
}

beforeAll(async () => {
  files = await new FileServer().start()
  db = openDatabase({ url: inject('databaseUrl'), applicationName: 'dutil-test' })
})
afterAll(async () => {
  await files.stop()
  await db.end()
})

describe('schema migrations', () => {
  it('apply in order on an empty PostgreSQL database, once, and leave nothing pending', async () => {
    const url = await createDatabase(inject('databaseUrl'), 'dutil_migration_test')
    const fresh = openDatabase({ url, applicationName: 'dutil-test' })
    try {
      expect(await pendingMigrations(fresh)).toEqual(knownMigrations())
      const log: string[] = []
      expect(await migrateDatabase(url, { info: (_o, m) => log.push(m) })).toEqual(knownMigrations())
      expect(await migrateDatabase(url, { info: (_o, m) => log.push(m) })).toEqual([])
      expect(await pendingMigrations(fresh)).toEqual([])
      const tables = await fresh.query<{ relname: string; relkind: string }>(
        `SELECT relname, relkind FROM pg_class WHERE relname IN ('jobs', 'idempotency_keys', 'usage_daily', '${MIGRATIONS_TABLE}') ORDER BY relname`,
      )
      // jobs is partitioned (relkind p); the others are plain tables.
      expect(tables.rows).toEqual([
        { relname: 'idempotency_keys', relkind: 'r' },
        { relname: 'jobs', relkind: 'p' },
        { relname: MIGRATIONS_TABLE, relkind: 'r' },
        { relname: 'usage_daily', relkind: 'r' },
      ])
      // 0002: the jobs table holds the runner's progress.
      const progress = await fresh.query<{ data_type: string }>(
        `SELECT data_type FROM information_schema.columns WHERE table_name = 'jobs' AND column_name = 'progress'`,
      )
      expect(progress.rows).toEqual([{ data_type: 'jsonb' }])
      // 0003: and the callback's delivery log, which keeps the newest 100 attempts.
      const logColumn = await fresh.query<{ data_type: string }>(
        `SELECT data_type FROM information_schema.columns WHERE table_name = 'jobs' AND column_name = 'callback_log'`,
      )
      expect(logColumn.rows).toEqual([{ data_type: 'jsonb' }])
      // 0008: a transition is one statement, and it writes every column the record has but the
      // keys and the sealed input (0009), which only the accept writes.
      const fn = await fresh.query<{ src: string }>(
        `SELECT prosrc AS src FROM pg_proc WHERE proname = 'job_transition'`,
      )
      expect(fn.rows).toHaveLength(1)
      const unset = JOB_COLUMNS.filter(
        (c) => c !== 'id' && c !== 'created_at' && !fn.rows[0].src.includes(`${c} = r.${c}`),
      )
      expect(unset).toEqual(['sealed_input'])
      const sealedColumn = await fresh.query<{ data_type: string }>(
        `SELECT data_type FROM information_schema.columns WHERE table_name = 'jobs' AND column_name = 'sealed_input'`,
      )
      expect(sealedColumn.rows).toEqual([{ data_type: 'text' }])
      const jobId = newId('job')
      const job = {
        metadata: { name: objectNameOf(jobId) },
        spec: {
          jobId,
          utility: 'split-pdf',
          mode: 'async',
          apiKeyId: 'key_K',
          apiKeyName: 'k',
          createdAt: createdAtOfJobId(jobId),
          inputKey: 'in',
          metadata: null,
          callbackUrl: 'https://h.example/x',
        },
      } as unknown as UtilityJobResource
      await insertAccepted(fresh, job, {})
      const entry = (attempt: number) => ({
        round: 1,
        attempt,
        at: '2026-11-24T10:00:01.000Z',
        durationMs: 5,
        outcome: 'retrying' as const,
        statusCode: 503,
        errorClass: 'http_status',
        error: 'The receiver answered 503.',
        nextAttemptAt: null,
      })
      for (let i = 1; i <= CALLBACK_LOG_MAX + 3; i++) await appendCallbackAttempt(fresh, job.spec.jobId, entry(i))
      const kept = await getCallbackLog(fresh, job.spec.jobId)
      expect(kept).toHaveLength(CALLBACK_LOG_MAX)
      expect([kept[0].attempt, kept.at(-1)!.attempt]).toEqual([4, CALLBACK_LOG_MAX + 3])
    } finally {
      await fresh.end()
    }
  })
})

describe('queued counts', () => {
  it('follow every accept and every move out of the queue, hold the per-key and per-owner ceilings exactly under concurrent accepts, and match the queue itself', async () => {
    const url = await createDatabase(inject('databaseUrl'), 'dutil_queued_counts_test')
    await migrateDatabase(url, { info: () => {} })
    const db = openDatabase({ url, applicationName: 'dutil-test' })
    const job = (apiKeyId: string, owner: string, extra: Partial<UtilityJobResource['spec']> = {}) => {
      const jobId = newId('job')
      return {
        metadata: { name: objectNameOf(jobId) },
        spec: {
          jobId,
          utility: 'split-pdf',
          mode: 'async',
          apiKeyId,
          apiKeyName: 'k',
          owner,
          createdAt: createdAtOfJobId(jobId),
          inputKey: 'in',
          metadata: null,
          ...extra,
        },
      } as unknown as UtilityJobResource
    }
    const counts = async () =>
      Object.fromEntries(
        (await db.query<{ scope: string; n: number }>('SELECT scope, n FROM queued_counts WHERE n > 0')).rows.map(
          (r) => [r.scope, r.n],
        ),
      )
    const truth = async () => {
      const rows = (
        await db.query<{ api_key_id: string; owner: string }>(
          "SELECT api_key_id, owner FROM jobs WHERE state = 'queued'",
        )
      ).rows
      const out: Record<string, number> = {}
      const add = (k: string) => (out[k] = (out[k] ?? 0) + 1)
      for (const r of rows) {
        add('platform')
        add(`owner/${r.owner}`)
        if (r.api_key_id) add(`key/${r.api_key_id}`)
      }
      return out
    }
    const ceilings = { maxQueuedPerKey: 4, maxQueuedPerOwner: 6, maxQueuedTotal: 100 }
    try {
      // Twenty accepts at once for one owner's two keys: exactly 4 + 2 pass.
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => insertAccepted(db, job(i % 2 ? 'key_A' : 'key_B', 'owner:ana'), ceilings)),
      )
      const kinds = outcomes.map((o) => (o.kind === 'over_ceiling' ? `refused:${o.scope}` : o.kind))
      expect(kinds.filter((k) => k === 'inserted')).toHaveLength(6)
      expect(kinds.filter((k) => k !== 'inserted').every((k) => k === 'refused:key' || k === 'refused:owner')).toBe(
        true,
      )
      // A playground run of the same person counts with them: refused; another owner's job is not.
      const playground = job('', 'owner:ana', { source: 'playground', userEmail: 'ana@example.com' })
      expect(await insertAccepted(db, playground, ceilings)).toMatchObject({ kind: 'over_ceiling', scope: 'owner' })
      const other = job('key_C', 'key:key_C')
      expect(await insertAccepted(db, other, ceilings)).toEqual({ kind: 'inserted' })
      const now = await counts()
      expect(now).toMatchObject({ platform: 7, 'owner/owner:ana': 6, 'owner/key:key_C': 1, 'key/key_C': 1 })
      expect(now['key/key_A'] + now['key/key_B']).toBe(6)
      expect(now).toEqual(await truth())
      // Out of the queue: running, cancelled, failed; a running job finishing changes nothing.
      const [first] = (await db.query<{ id: string }>("SELECT id FROM jobs WHERE api_key_id = 'key_A' LIMIT 1")).rows
      const record = (await getJob(db, first.id))!
      const status = (state: 'running' | 'succeeded' | 'cancelled') => ({
        state,
        startedAt: state === 'cancelled' ? null : record.spec.createdAt,
        finishedAt: state === 'running' ? null : record.spec.createdAt,
        timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: null },
        result: null,
        error: null,
      })
      expect(await recordTransition(db, { spec: record.spec, status: status('running') })).toBe(true)
      expect(await recordTransition(db, { spec: record.spec, status: status('succeeded') })).toBe(true)
      expect(await recordTransition(db, { spec: other.spec, status: status('cancelled') })).toBe(true)
      // A stale view of a finished job moves nothing.
      expect(await recordTransition(db, { spec: other.spec, status: status('cancelled') })).toBe(false)
      const after = await counts()
      expect(after).toMatchObject({ platform: 5, 'owner/owner:ana': 5 })
      expect(after['key/key_A']).toBe(now['key/key_A'] - 1)
      expect(after).toEqual(await truth())
      // Room again for the owner: one more.
      expect(await insertAccepted(db, job('key_A', 'owner:ana'), ceilings)).toEqual({ kind: 'inserted' })
      expect(await insertAccepted(db, job('key_B', 'owner:ana'), ceilings)).toMatchObject({ kind: 'over_ceiling' })
    } finally {
      await db.end()
    }
  })
})

describe('queued counts kept wrong', () => {
  it('are recounted from the rows: an undercount that let a key past its ceiling, and a count with no rows, are corrected and reported', async () => {
    const url = await createDatabase(inject('databaseUrl'), 'dutil_queued_recount_test')
    await migrateDatabase(url, { info: () => {} })
    const db = openDatabase({ url, applicationName: 'dutil-test' })
    const job = (apiKeyId: string) => {
      const jobId = newId('job')
      return {
        metadata: { name: objectNameOf(jobId) },
        spec: {
          jobId,
          utility: 'split-pdf',
          mode: 'async',
          apiKeyId,
          apiKeyName: 'k',
          owner: `key:${apiKeyId}`,
          createdAt: createdAtOfJobId(jobId),
          inputKey: 'in',
          metadata: null,
        },
      } as unknown as UtilityJobResource
    }
    const ceilings = { maxQueuedPerKey: 4, maxQueuedPerOwner: 100, maxQueuedTotal: 100 }
    const count = async (scope: string) =>
      (await db.query<{ n: number }>('SELECT n FROM queued_counts WHERE scope = $1', [scope])).rows[0]?.n ?? 0
    try {
      for (let i = 0; i < 4; i++) expect(await insertAccepted(db, job('key_R'), ceilings)).toEqual({ kind: 'inserted' })
      // Rows a program wrote without counting them (an older gateway during an upgrade), and a
      // stale count of an owner with no queued rows.
      await db.query("UPDATE queued_counts SET n = 1 WHERE scope IN ('key/key_R', 'owner/key:key_R', 'platform')")
      await db.query("INSERT INTO queued_counts (scope, n) VALUES ('owner/key:gone', 7)")
      // The undercount lets the key past its ceiling of 4.
      expect(await insertAccepted(db, job('key_R'), ceilings)).toEqual({ kind: 'inserted' })
      const upkeep = new JobRecordUpkeep({ db, log: pino({ level: 'silent' }) } as unknown as UpkeepDeps)
      // 5 rows against 2 kept for the key, its owner and the platform (3 × 3), and 7 for nobody.
      expect(await upkeep.recountQueued()).toBe(16)
      expect([await count('key/key_R'), await count('owner/key:key_R'), await count('platform')]).toEqual([5, 5, 5])
      expect(await count('owner/key:gone')).toBe(0)
      expect(await insertAccepted(db, job('key_R'), ceilings)).toMatchObject({ kind: 'over_ceiling', scope: 'key' })
      expect(await upkeep.recountQueued()).toBe(0)
    } finally {
      await db.end()
    }
  })
})

describe('lost hand-offs behind a deep queue', () => {
  it('are found at any depth: a lost row behind 1,200 older open rows that reached the cluster fails as lost', async () => {
    const url = await createDatabase(inject('databaseUrl'), 'dutil_lost_depth_test')
    await migrateDatabase(url, { info: () => {} })
    const db = openDatabase({ url, applicationName: 'dutil-test' })
    const base = Date.now() - 10 * 60_000
    const row = (i: number) => {
      const at = base + i
      const jobId = `job_${ulid(at)}`
      return {
        spec: {
          jobId,
          utility: 'split-pdf',
          mode: 'async',
          apiKeyId: 'key_D',
          apiKeyName: 'k',
          createdAt: isoMs(at),
          inputKey: 'in',
          metadata: null,
        },
      } as unknown as UtilityJobResource
    }
    const ceilings = { maxQueuedPerKey: 10_000, maxQueuedPerOwner: 10_000, maxQueuedTotal: 10_000 }
    try {
      const live = new Set<string>()
      for (let i = 0; i < 1200; i++) {
        const r = row(i)
        live.add(objectNameOf(r.spec.jobId))
        await insertAccepted(db, r, ceilings)
      }
      const lost = row(5000)
      await insertAccepted(db, lost, ceilings)
      const upkeep = new JobRecordUpkeep({
        db,
        namespace: 'dutil',
        utilityJobs: { get: (name: string) => (live.has(name) ? {} : undefined) },
        api: { get: async () => undefined },
        log: pino({ level: 'silent' }),
      } as unknown as UpkeepDeps)
      expect(await upkeep.failLostHandoffs()).toBe(1)
      expect((await getJob(db, lost.spec.jobId))?.status).toMatchObject({ state: 'failed', error: { code: 'lost' } })
    } finally {
      await db.end()
    }
  })
})

describe('the job record through the platform', () => {
  it('holds a row for every accepted job; the API view from the row equals the view from the UtilityJob', async () => {
    const { key, id: keyId } = await createKey()
    const url = files.add('rec.pdf', await makePdf(2))
    const res = await api('POST', '/v1/utilities/split-pdf', {
      key,
      body: { input: { url }, metadata: { ref: 'R-1' } },
    })
    expect(res.status).toBe(200)
    const uj = await readJob(objectNameOf(res.body.id))
    const row = await getJob(db, res.body.id)
    expect(row).toBeDefined()
    expect(row!.spec.apiKeyId).toBe(keyId)
    // One function, two sources, the same JSON.
    expect(toJobView(row!, fixedLink)).toEqual(toJobView(uj, fixedLink))
    expect(toJobView(row!, fixedLink)).toMatchObject({
      id: res.body.id,
      status: 'succeeded',
      metadata: { ref: 'R-1' },
      result: { pageCount: 2 },
    })
  })

  it('lists from the record: a job is on the first page the moment its create answered', async () => {
    const { key } = await createKey()
    const url = files.add('seen.pdf', await makePdf(1))
    const ids: string[] = []
    for (let i = 0; i < 12; i++) {
      const res = await api('POST', '/v1/utilities/split-pdf/jobs', { key, body: { input: { url } } })
      expect(res.status).toBe(202)
      ids.push(res.body.id)
      const first = await api('GET', '/v1/jobs?limit=5', { key })
      expect(first.body.items[0].id).toBe(res.body.id)
    }
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: any = await api('GET', `/v1/jobs?limit=5${cursor ? `&cursor=${cursor}` : ''}`, { key })
      seen.push(...page.body.items.map((j: { id: string }) => j.id))
      cursor = page.body.nextCursor
    } while (cursor)
    expect(seen).toEqual([...ids].reverse())
  })

  it('walks a history that is appended to and expired while it is read: every job once, none skipped', async () => {
    const { key, id: keyId } = await createKey()
    // 60 jobs over the last three days, straight into the record (as history would be).
    const now = Date.now()
    const made: string[] = []
    for (let i = 0; i < 60; i++) {
      const at = now - 3 * 86_400_000 + i * 3_600_000
      const id = `job_${ulid(at)}` // not newId: its monotonic factory never goes back in time
      await insertAccepted(db, {
        spec: {
          jobId: id,
          utility: i % 2 ? 'split-pdf' : 'zip-files',
          mode: 'async',
          apiKeyId: keyId,
          apiKeyName: 'history',
          createdAt: isoMs(at),
          inputKey: `_jobs/${id}/input.json`,
          metadata: null,
        },
        status: {
          state: 'succeeded',
          startedAt: isoMs(at),
          finishedAt: isoMs(at + 1000),
          timings: { queueMs: 0, upstreamMs: 500, storageMs: 100, totalMs: 1000 },
          result: { files: [], extras: {} },
          error: null,
        },
      })
      made.push(id)
    }
    const oldestDay = isoMs(now - 3 * 86_400_000).slice(0, 10)
    const expiredIds = new Set(made.filter((id) => createdAtOfJobId(id)!.slice(0, 10) === oldestDay))
    expect(expiredIds.size).toBeGreaterThan(0)
    const seen: string[] = []
    const appended: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: any = await api('GET', `/v1/jobs?limit=7${cursor ? `&cursor=${cursor}` : ''}`, { key })
      expect(page.status).toBe(200)
      seen.push(...page.body.items.map((j: { id: string }) => j.id))
      cursor = page.body.nextCursor
      pages++
      if (pages === 2) {
        // New jobs arrive (newer than any page still to come) and the oldest day expires.
        const url = files.add('walk.pdf', await makePdf(1))
        for (let i = 0; i < 3; i++)
          appended.push((await api('POST', '/v1/utilities/split-pdf/jobs', { key, body: { input: { url } } })).body.id)
        await dropPartition(db, oldestDay)
      }
    } while (cursor)
    expect(new Set(seen).size).toBe(seen.length)
    for (const id of appended) expect(seen).not.toContain(id) // newer than the first page: not in this walk
    const expected = [...made].reverse().filter((id) => !expiredIds.has(id))
    expect(seen.filter((id) => !expiredIds.has(id))).toEqual(expected)
    // Whatever of the expired day was read before it expired, it was read once, in order.
    expect(seen.filter((id) => expiredIds.has(id))).toEqual(
      [...made]
        .reverse()
        .filter((id) => expiredIds.has(id))
        .slice(0, seen.filter((id) => expiredIds.has(id)).length),
    )
    expect(await partitionDays(db)).not.toContain(oldestDay)
  })

  it('keeps usage as a per-day aggregate equal to what the jobs themselves add up to', async () => {
    const { key, id: keyId } = await createKey()
    const url = files.add('use.pdf', await makePdf(3))
    const done = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url } } })
    expect(done.status).toBe(200)
    const bad = await api('POST', '/v1/utilities/split-pdf', {
      key,
      body: { input: { url: files.add('not.pdf', Buffer.from('<html>')) } },
    })
    expect(bad.status).toBe(422)
    const jobs = await Promise.all([done.body.id, bad.body.id].map((id: string) => getJob(db, id)))
    const day = isoMs(Date.now()).slice(0, 10)
    const fromTable = (await usageTableRows(db, day, day)).filter((r) => r.keyId === keyId)
    expect(fromTable).toEqual(usageRows(jobs.map((j) => j!)))
    expect(fromTable[0]).toMatchObject({ jobs: 2, succeeded: 1, failed: 1, errors: { upstream_rejected: 1 } })
    expect(fromTable[0].outputBytes).toBeGreaterThan(0)
  })

  it('archives a UtilityJob made before the record existed (the upgrade path), and removes finished ones after their grace', async () => {
    const { id: keyId, key } = await createKey()
    // As the previous version made them: no finalizer, no row.
    const now = Date.now()
    const jobId = newId('job', now)
    const storage = inject('storage')
    await writeJsonObject(storageClient(storage), storage.bucket, inputObjectKey(jobId), {
      url: files.add('old.pdf', await makePdf(1)),
    })
    await custom().createNamespacedCustomObject({
      ...coords,
      body: {
        apiVersion: API_GROUP_VERSION,
        kind: 'UtilityJob',
        metadata: {
          name: objectNameOf(jobId),
          labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.utility]: 'split-pdf' },
        },
        spec: {
          jobId,
          utility: 'split-pdf',
          mode: 'async',
          apiKeyId: keyId,
          apiKeyName: 'old',
          createdAt: isoMs(now),
          inputKey: inputObjectKey(jobId),
          metadata: null,
        },
      },
    })
    await until(
      'row of the old job, finished',
      async () => (await getJob(db, jobId))?.status?.state === 'succeeded',
      60_000,
      200,
    )
    expect((await api('GET', '/v1/jobs?limit=1', { key })).body.items[0].id).toBe(jobId)

    // Restart the operator with a one-second grace: finished jobs leave the cluster, not the API.
    await terminateComponent('operator')
    startOperator({ DUTIL_JOB_GRACE_SECONDS: '1' })
    await waitForOperatorReady()
    try {
      const res = await api('POST', '/v1/utilities/split-pdf', {
        key,
        body: { input: { url: files.add('grace.pdf', await makePdf(2)) } },
      })
      expect(res.status).toBe(200)
      const name = objectNameOf(res.body.id)
      await until('UtilityJob removed after its grace', () => gone(name), 30_000, 250)
      const archived = await api('GET', `/v1/jobs/${res.body.id}`, { key })
      expect(archived.status).toBe(200)
      const { result: a, ...restArchived } = archived.body
      const { result: b, ...restLive } = res.body
      expect(restArchived).toEqual(restLive)
      expect(a.files.map((f: { key: string }) => f.key)).toEqual(b.files.map((f: { key: string }) => f.key))
      expect((await fetch(a.files[0].url)).status).toBe(200)
      const list = await api('GET', '/v1/jobs?limit=5', { key })
      expect(list.body.items[0]).toMatchObject({ id: res.body.id, status: 'succeeded', fileCount: 2 })
    } finally {
      await terminateComponent('operator')
      startOperator()
      await waitForOperatorReady()
    }
  })

  it('records a job deleted from the cluster before it finished as lost, and lets the object go', async () => {
    const { key } = await createKey()
    files.add('slow.pdf', await makePdf(1))
    const res = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key,
      body: { input: { url: `${files.url}/slow/slow.pdf?ms=20000` } },
    })
    expect(res.status).toBe(202)
    const name = objectNameOf(res.body.id)
    const uj = (await custom().getNamespacedCustomObject({ ...coords, name })) as UtilityJobResource
    expect(uj.metadata.finalizers).toContain(JOB_RECORD_FINALIZER)
    await custom().deleteNamespacedCustomObject({ ...coords, name })
    await until('object gone', () => gone(name), 30_000, 250)
    const after = await api('GET', `/v1/jobs/${res.body.id}`, { key })
    expect(after.status).toBe(200)
    expect(after.body).toMatchObject({ status: 'failed', error: { code: 'lost' } })
  })
})

/** A queued split-pdf row of the key whose UtilityJob never came, as a gateway that died writes it. */
function queuedRow(id: string, at: number, keyId: string, extra: Partial<UtilityJobResource['spec']> = {}) {
  return {
    spec: {
      jobId: id,
      utility: 'split-pdf',
      mode: 'async' as const,
      apiKeyId: keyId,
      apiKeyName: 'crashed-gateway',
      createdAt: isoMs(at),
      inputKey: inputObjectKey(id),
      metadata: null,
      ...extra,
    },
  }
}

describe('a lost hand-off', () => {
  it('fails a row whose UtilityJob never came (its gateway died between the two writes) as lost', async () => {
    const { key, id: keyId } = await createKey()
    const at = Date.now() - 5 * 60_000
    const id = `job_${ulid(at)}`
    await insertAccepted(db, queuedRow(id, at, keyId))
    expect((await api('GET', `/v1/jobs/${id}`, { key })).body.status).toBe('queued')
    // The operator looks for them when it takes the lease, and every 30 s after.
    await terminateComponent('operator')
    startOperator()
    await waitForOperatorReady()
    await until('row failed as lost', async () => (await getJob(db, id))?.status?.state === 'failed', 30_000, 250)
    const res = await api('GET', `/v1/jobs/${id}`, { key })
    expect(res.body).toMatchObject({ status: 'failed', error: { code: 'lost' } })
    expect(res.body.finishedAt).toBeTruthy()
  })
})

describe('a hand-off completed on the retry', () => {
  it('runs a row whose UtilityJob never came when its client sends the request again with its Idempotency-Key, its input sealed in the row', async () => {
    const { key, id: keyId } = await createKey()
    const url = files.add('retried.pdf', await makePdf(2))
    const at = Date.now()
    const id = `job_${ulid(at)}`
    // The row as the gateway writes it before the UtilityJob: the input sealed with the job's key.
    const installation = await InputSealingKey.of(kubeConfig().makeApiClient(CoreV1Api), 'dutil', 'make').key()
    const sealedInput = sealDocument(JSON.stringify({ url }), jobSealKey(installation, id), id)
    await insertAccepted(
      db,
      queuedRow(id, at, keyId, { idempotencyKeyHash: idempotencyHash(keyId, 'retry-1'), sealedInput }),
    )
    expect(await gone(objectNameOf(id))).toBe(true)
    const again = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key,
      headers: { 'Idempotency-Key': 'retry-1' },
      body: { input: { url } },
    })
    expect(again.status, JSON.stringify(again.body)).toBe(202)
    expect(again.body.id).toBe(id)
    expect((await readJob(objectNameOf(id))).spec.sealedInput).toBe(sealedInput)
    const done = await api('GET', `/v1/jobs/${id}?wait=60`, { key })
    expect(done.body, JSON.stringify(done.body)).toMatchObject({ status: 'succeeded', result: { pageCount: 2 } })
    // The row held the sealed input while the job was queued, and drops it as the job moves on.
    await until('row final', async () => (await getJob(db, id))?.status?.state === 'succeeded', 30_000, 200)
    const kept = await db.query<{ sealed_input: string | null }>('SELECT sealed_input FROM jobs WHERE id = $1', [id])
    expect(kept.rows).toEqual([{ sealed_input: null }])
  })
})

describe('PostgreSQL down and restarted', () => {
  it('answers internal with requestId and Retry-After while it is down, is unready, and loses no accepted job across a restart', async () => {
    const { key } = await createKey()
    const url = files.add('pg.pdf', await makePdf(1))
    const accepted: string[] = []
    const refused: number[] = []
    const burst = (async () => {
      for (let i = 0; i < 60; i++) {
        const res = await api('POST', '/v1/utilities/split-pdf/jobs', { key, body: { input: { url } } })
        if (res.status === 202) accepted.push(res.body.id)
        else {
          refused.push(res.status)
          expect(res.status).toBe(500)
          expect(res.body.error).toMatchObject({ code: 'internal', requestId: expect.any(String) })
          expect(res.headers.get('retry-after')).toBe('5')
        }
        await new Promise((r) => setTimeout(r, 50))
      }
    })()
    await new Promise((r) => setTimeout(r, 500))
    killComponent('postgres')
    await until(
      'gateway unready',
      async () => (await fetch(`${inject('gatewayUrl')}/readyz`)).status === 503,
      15_000,
      200,
    )
    const down = await api('GET', '/v1/jobs', { key })
    expect(down.status).toBe(500)
    expect(down.headers.get('retry-after')).toBe('5')
    expect(down.body.error.requestId).toBe(down.headers.get('x-request-id'))
    await new Promise((r) => setTimeout(r, 1500))
    startComponent('postgres')
    await until(
      'gateway ready again',
      async () => (await fetch(`${inject('gatewayUrl')}/readyz`)).status === 200,
      60_000,
      250,
    )
    await burst
    expect(accepted.length).toBeGreaterThan(0)
    expect(refused.length).toBeGreaterThan(0)
    // Every job the gateway acknowledged is in the record and finishes.
    for (const id of accepted) {
      const done = await api('GET', `/v1/jobs/${id}?wait=60`, { key })
      expect(done.status).toBe(200)
      expect(done.body.status).toBe('succeeded')
    }
    await until(
      'all rows final',
      async () => {
        for (const id of accepted) if ((await getJob(db, id))?.status?.state !== 'succeeded') return false
        return true
      },
      60_000,
      500,
    )
  })
})
