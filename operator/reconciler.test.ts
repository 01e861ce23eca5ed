import type { BatchV1Api, CustomObjectsApi, ObjectCache, V1Job, V1Pod } from '@kubernetes/client-node'
import type { Client } from 'minio'
import pino from 'pino'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { JOB_RECORD_FINALIZER, LABELS } from '../contract/api-group.js'
import {
  MAX_PROGRESS_BYTES,
  MAX_RESULT_MANIFEST_BYTES,
  progressObjectKey,
  resultObjectKey,
} from '../contract/runner-protocol.js'
import { outputKey } from '../contract/storage-keys.js'
import { GrantRefused } from '../contract/storage-grant.js'
import type { IssueCredentials } from './runner-credentials.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { jobNameFor } from './desired-job.js'
import { EARLY_RESULT_READS_MS, RUNNING_RESULT_READS_MS } from './job-run.js'
import { PROGRESS_POLL_MS, type JobRecordWriter, statusToWrite, UtilityJobReconciler } from './reconciler.js'
import { runnerSettings } from '../test/support/runner-settings.js'

const NS = 'dutil'
const NOW = Date.parse('2026-11-24T10:00:00.000Z')

const settings = runnerSettings()

function utilityJob(
  spec: Partial<UtilityJobResource['spec']> = {},
  status?: UtilityJobResource['status'],
): UtilityJobResource {
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: 'job-01m8abc', namespace: NS, uid: 'uid-1', resourceVersion: '10', generation: 1 },
    spec: {
      jobId: 'job_01M8ABCDEFGHJKMNPQRSTVWXYZ',
      utility: 'split-pdf',
      mode: 'async',
      apiKeyId: 'key_1',
      apiKeyName: 'k',
      createdAt: '2026-11-24T09:59:59.000Z',
      inputKey: '_jobs/x/input.json',
      metadata: null,
      ...spec,
    },
    ...(status ? { status } : {}),
  } as UtilityJobResource
}

const cacheOf = <T extends { metadata?: { name?: string } }>(items: Map<string, T>) =>
  ({ get: (name: string) => items.get(name), list: () => [...items.values()] }) as unknown as ObjectCache<T>

/**
 * The reconciler against fakes of the world it reads (caches of UtilityJobs, Jobs and Pods) and
 * of the APIs it writes: every write is recorded in order, with the fence calls between them.
 */
function world(opts: {
  uj: UtilityJobResource
  jobs?: V1Job[]
  mayStart?: boolean
  held?: boolean
  storage?: Client
  graceMs?: number
  revokedKeys?: string[]
  /** Jobs of the utility wait for a slot. */
  waiting?: boolean
  issueCredentials?: IssueCredentials
}) {
  const writes: string[] = []
  const utilityJobs = new Map([[opts.uj.metadata.name, opts.uj]])
  const jobs = new Map((opts.jobs ?? []).map((j) => [j.metadata!.name!, j]))
  const pods = new Map<string, V1Pod>()
  const created: V1Job[] = []
  const statuses: UtilityJobResource[] = []
  let rv = 100
  const batch = {
    createNamespacedJob: async ({ body }: { body: V1Job }) => {
      writes.push(`create job ${body.metadata!.name}`)
      created.push(body)
      return body
    },
    deleteNamespacedJob: async ({ name }: { name: string }) => {
      writes.push(`delete job ${name}`)
      return {}
    },
  } as unknown as BatchV1Api
  const custom = {
    deleteNamespacedCustomObject: async ({ name }: { name: string }) => {
      writes.push(`delete utilityjob ${name}`)
      return {}
    },
    replaceNamespacedCustomObjectStatus: async ({ body }: { body: UtilityJobResource }) => {
      writes.push(`status ${body.status!.state}`)
      statuses.push(body)
      return { ...body, metadata: { ...body.metadata, resourceVersion: String(++rv) } }
    },
  } as unknown as CustomObjectsApi
  const records: JobRecordWriter = {
    transition: async (j) => {
      writes.push(`record ${(j as UtilityJobResource).status?.state}`)
    },
    callback: async () => {},
  }
  let scheduled = 0
  const reconciler = new UtilityJobReconciler({
    namespace: NS,
    utilityJobs: cacheOf(utilityJobs),
    jobs: cacheOf(jobs),
    pods: cacheOf(pods),
    batch,
    custom,
    storage: opts.storage ?? ({} as Client),
    fence: () => writes.push('fence'),
    admission: {
      mayStart: () => opts.mayStart ?? true,
      schedule: () => void scheduled++,
      wasHeld: () => opts.held ?? false,
      hasWaiting: () => opts.waiting ?? false,
    },
    issueCredentials:
      opts.issueCredentials ??
      (async () => ({
        accessKey: 'ASIATEMP',
        secretKey: 's',
        sessionToken: 't',
        expiresAt: '2026-11-24T10:30:00.000Z',
      })),
    bucket: 'dutil',
    runner: settings,
    log: pino({ level: 'silent' }),
    now: () => NOW,
    records,
    graceMs: opts.graceMs ?? 60_000,
    keyRevoked: (id) => (opts.revokedKeys ?? []).includes(id),
  })
  return { reconciler, writes, created, statuses, jobs, pods, utilityJobs, scheduled: () => scheduled }
}

describe('a failed job’s batch Job', () => {
  const failedAt = (msAgo: number) =>
    utilityJob({}, {
      state: 'failed',
      finishedAt: new Date(NOW - msAgo).toISOString(),
      error: { code: 'upstream_rejected', message: 'not a PDF' },
    } as UtilityJobResource['status'])
  const batchJobOf = (uj: UtilityJobResource) => ({ metadata: { name: jobNameFor(uj), namespace: NS } }) as V1Job

  it('stays for its grace after the failure (kubectl logs), the pass coming back when it ends', async () => {
    const uj = failedAt(30_000)
    const w = world({ uj, jobs: [batchJobOf(uj)] })
    // The UtilityJob's own grace (60 s here) ends first: the earlier of the two comes back.
    expect(await w.reconciler.reconcile(uj.metadata.name)).toEqual({ requeueAfterMs: 30_000 })
    expect(w.writes.filter((x) => x.startsWith('delete'))).toEqual([])
  })

  it('goes after 5 minutes, before the 15 after which KubeJobFailed fires', async () => {
    const early = failedAt(299_000)
    const w1 = world({ uj: early, jobs: [batchJobOf(early)], graceMs: 3_600_000 })
    expect(await w1.reconciler.reconcile(early.metadata.name)).toEqual({ requeueAfterMs: 1000 })
    expect(w1.writes.filter((x) => x.startsWith('delete'))).toEqual([])
    const due = failedAt(300_000)
    const w2 = world({ uj: due, jobs: [batchJobOf(due)], graceMs: 3_600_000 })
    await w2.reconciler.reconcile(due.metadata.name)
    expect(w2.writes.filter((x) => x.startsWith('delete'))).toEqual([`delete job ${jobNameFor(due)}`])
  })

  it('is left alone for a succeeded job (its Job completed: no alert to spare)', async () => {
    const uj = utilityJob({}, {
      state: 'succeeded',
      finishedAt: new Date(NOW - 400_000).toISOString(),
    } as UtilityJobResource['status'])
    const w = world({ uj, jobs: [batchJobOf(uj)], graceMs: 3_600_000 })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes.filter((x) => x.startsWith('delete'))).toEqual([])
  })
})

/** The writes of a pass that admits a queued job: its batch Job, then its row and status (Admitted). */
const admittedWrites = (uj: UtilityJobResource) => [
  'fence',
  'fence',
  `create job ${jobNameFor(uj)}`,
  'fence',
  'record queued',
  'fence',
  'status queued',
]

describe('the reconciler pass', () => {
  it('gives a queued job exactly one batch Job, owned by it, then records and writes Admitted, each write behind the fence', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.created).toHaveLength(1)
    const job = w.created[0]
    expect(job.metadata!.name).toBe(jobNameFor(uj))
    expect(job.metadata!.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'UtilityJob', name: uj.metadata.name, uid: 'uid-1', controller: true }),
    ])
    // A job made without the gateway gets its row first. Then the Job, the row before the
    // status, and the fence before each write.
    expect(w.writes).toEqual(['fence', 'record queued', ...admittedWrites(uj)])
    const conditions = w.statuses[0].status!.conditions!
    expect(conditions.find((c) => c.type === 'Admitted')).toMatchObject({ status: 'True' })
  })

  it('writes no row ahead of the pass for a job the gateway made (its row came first, the finalizer says so)', async () => {
    const made = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const uj = { ...made, metadata: { ...made.metadata, finalizers: [JOB_RECORD_FINALIZER] } }
    const w = world({ uj })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes).toEqual(admittedWrites(uj))
  })

  it('does not create a second Job once the cache has the first: the same pass twice is one Job', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj })
    await w.reconciler.reconcile(uj.metadata.name)
    // The watch delivers the Job and the status the pass wrote.
    w.jobs.set(jobNameFor(uj), w.created[0])
    w.utilityJobs.set(uj.metadata.name, { ...w.statuses[0], metadata: { ...uj.metadata, resourceVersion: '101' } })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.created).toHaveLength(1)
  })

  it('waits for the watch when the cache is older than the status it just wrote', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj })
    await w.reconciler.reconcile(uj.metadata.name)
    const before = w.writes.length
    // The cache still holds resourceVersion 10: a pass now would act on a stale view.
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes.length).toBe(before)
  })

  it('fails a job whose storage grant is refused as storage_error, with no Job, so its slot is free', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({
      uj,
      issueCredentials: async () => {
        throw new GrantRefused("Storage refused the job's access grant (MalformedPolicyDocument).")
      },
    })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.created).toEqual([])
    expect(w.statuses.at(-1)!.status).toMatchObject({
      state: 'failed',
      error: { code: 'storage_error', message: expect.stringContaining('MalformedPolicyDocument') },
    })
  })

  it('asks again for a grant storage could not be reached for: no status, the pass fails and is retried', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({
      uj,
      issueCredentials: async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:9000')
      },
    })
    await expect(w.reconciler.reconcile(uj.metadata.name)).rejects.toThrow('ECONNREFUSED')
    expect(w.statuses).toEqual([])
  })

  it('leaves a job above its utility limit queued: no Job, no status write, admission scheduled', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj, mayStart: false })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.created).toEqual([])
    expect(w.statuses).toEqual([])
    expect(w.scheduled()).toBe(1)
  })

  it('shows a sync job held back for want of a slot as queued, Admitted False, and creates no Job', async () => {
    const uj = utilityJob({ mode: 'sync' })
    const w = world({ uj, mayStart: false, held: true })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.created).toEqual([])
    expect(w.statuses.map((s) => s.status!.state)).toEqual(['queued'])
    expect(w.statuses[0].status!.conditions!.find((c) => c.type === 'Admitted')).toMatchObject({
      status: 'False',
      reason: 'Queued',
    })
    // Not yet looked at by admission: nothing written, a pass asked for.
    const fresh = world({ uj, mayStart: false, held: false })
    await fresh.reconciler.reconcile(uj.metadata.name)
    expect(fresh.statuses).toEqual([])
    expect(fresh.scheduled()).toBe(1)
  })

  it('starts a sync job admitted on arrival at its acceptance (queueMs 0), and one that waited at its admission', async () => {
    const onArrival = world({ uj: utilityJob({ mode: 'sync' }) })
    await onArrival.reconciler.reconcile('job-01m8abc')
    expect(onArrival.created).toHaveLength(1)
    expect(onArrival.statuses[0].status).toMatchObject({
      state: 'running',
      startedAt: '2026-11-24T09:59:59.000Z',
      timings: { queueMs: 0 },
    })
    const waited = world({ uj: utilityJob({ mode: 'sync' }, { state: 'queued' } as UtilityJobResource['status']) })
    await waited.reconciler.reconcile('job-01m8abc')
    expect(waited.statuses[0].status).toMatchObject({
      state: 'running',
      startedAt: '2026-11-24T10:00:00.000Z',
      timings: { queueMs: 1000 },
    })
  })

  it('cancels a job still queued: its Job goes (by name, whatever the cache says) and the status says cancelled', async () => {
    const uj = utilityJob(
      { cancelRequested: true } as Partial<UtilityJobResource['spec']>,
      { state: 'queued' } as UtilityJobResource['status'],
    )
    const w = world({ uj })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.created).toEqual([])
    expect(w.writes).toContain(`delete job ${jobNameFor(uj)}`)
    expect(w.statuses.map((s) => s.status!.state)).toEqual(['cancelled'])
  })

  it("cancels a revoked key's queued job and leaves another key's alone", async () => {
    const queued = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj: queued, revokedKeys: ['key_1'] })
    await w.reconciler.reconcile(queued.metadata.name)
    expect(w.created).toEqual([])
    expect(w.statuses.map((s) => s.status!.state)).toEqual(['cancelled'])
    // Another key's queued job is not touched.
    const other = world({ uj: queued, revokedKeys: ['key_2'] })
    await other.reconciler.reconcile(queued.metadata.name)
    expect(other.statuses.map((s) => s.status!.state)).not.toContain('cancelled')
  })

  it('does not touch a Job of the same name that another object owns, and looks again later', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const foreign = {
      metadata: {
        name: jobNameFor(uj),
        namespace: NS,
        ownerReferences: [{ apiVersion: 'dutil.io/v1alpha1', kind: 'UtilityJob', name: 'other', uid: 'uid-other' }],
      },
    } as V1Job
    const w = world({ uj, jobs: [foreign] })
    expect(await w.reconciler.reconcile(uj.metadata.name)).toEqual({ requeueAfterMs: 5000 })
    expect(w.created).toEqual([])
    expect(w.writes.filter((x) => x.startsWith('status') || x.startsWith('delete'))).toEqual([])
  })

  it('fails a job whose utility the catalog does not have, as internal, without a Job', async () => {
    const uj = utilityJob({ utility: 'no-such-utility' }, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.created).toEqual([])
    expect(w.statuses[0].status).toMatchObject({
      state: 'failed',
      error: { code: 'internal', message: 'This utility is not available.' },
    })
  })

  it('forgets a job that is gone from the cache', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj })
    w.utilityJobs.clear()
    expect(await w.reconciler.reconcile(uj.metadata.name)).toBeUndefined()
    expect(w.writes).toEqual([])
  })

  describe('objects a runner wrote, read within their bounds', () => {
    /** Storage whose every object is `size` bytes of JSON-ish filler, produced as it is read. */
    const endless = (size: number, only?: string) => {
      const pulled = { bytes: 0 }
      const client = {
        getObject: async (_bucket: string, key: string) => {
          if (only !== undefined && key !== only)
            throw Object.assign(new Error('The specified key does not exist.'), { code: 'NoSuchKey' })
          return Readable.from(
            (function* () {
              for (let sent = 0; sent < size; sent += 65_536) {
                pulled.bytes += 65_536
                yield Buffer.alloc(65_536, 0x20)
              }
            })(),
          )
        },
      } as unknown as Client
      return { client, pulled }
    }
    const jobFor = (uj: UtilityJobResource, complete: boolean) =>
      ({
        metadata: {
          name: jobNameFor(uj),
          namespace: NS,
          ownerReferences: [
            { apiVersion: 'dutil.io/v1alpha1', kind: 'UtilityJob', name: uj.metadata.name, uid: 'uid-1' },
          ],
        },
        status: complete
          ? { conditions: [{ type: 'Complete', status: 'True' }], completionTime: new Date(NOW - 100) }
          : { active: 1 },
      }) as unknown as V1Job
    const runningPod = (uj: UtilityJobResource) =>
      ({
        metadata: { name: 'p', namespace: NS, labels: { [LABELS.jobId]: uj.metadata.name } },
        status: {
          phase: 'Running',
          containerStatuses: [{ name: 'runner', state: { running: { startedAt: new Date(NOW - 1000) } } }],
        },
      }) as unknown as V1Pod

    /** Storage holding the job's result manifest once `stored` (NoSuchKey before). */
    const manifestStore = (uj: UtilityJobResource) => {
      const state = { stored: false, reads: 0 }
      const manifest = {
        files: [
          {
            key: outputKey('split-pdf', Date.parse(uj.spec.createdAt), uj.spec.jobId, 'page-1.pdf'),
            name: 'page-1.pdf',
            size: 10,
            contentType: 'application/pdf',
          },
        ],
        extras: { pageCount: 1 },
        startedAt: new Date(NOW - 900).toISOString(),
        upstreamMs: 80,
        storageMs: 20,
      }
      const client = {
        getObject: async (_bucket: string, key: string) => {
          if (key === resultObjectKey(uj.spec.jobId)) state.reads++
          if (!state.stored || key !== resultObjectKey(uj.spec.jobId))
            throw Object.assign(new Error('The specified key does not exist.'), { code: 'NoSuchKey' })
          return Readable.from([Buffer.from(JSON.stringify(manifest))])
        },
      } as unknown as Client
      return { client, state, reads: () => state.reads }
    }

    it('finishes a young job as soon as its manifest is stored, while its pod still shows the runner running', async () => {
      const uj = utilityJob({}, { state: 'running' } as UtilityJobResource['status'])
      const store = manifestStore(uj)
      const w = world({ uj, jobs: [jobFor(uj, false)], storage: store.client })
      w.pods.set('p', runningPod(uj))
      // Not stored yet: nothing written, and the pass comes back soon.
      expect(await w.reconciler.reconcile(uj.metadata.name)).toEqual({ requeueAfterMs: RUNNING_RESULT_READS_MS[0] })
      expect(w.statuses).toEqual([])
      store.state.stored = true
      await w.reconciler.reconcile(uj.metadata.name)
      expect(w.statuses.map((x) => x.status)).toEqual([
        expect.objectContaining({ state: 'succeeded', result: expect.objectContaining({ extras: { pageCount: 1 } }) }),
      ])
    })

    it('reads early only on its schedule: after it, the pod status alone decides', async () => {
      const uj = utilityJob({}, { state: 'running' } as UtilityJobResource['status'])
      const store = manifestStore(uj)
      const w = world({ uj, jobs: [jobFor(uj, false)], storage: store.client })
      w.pods.set('p', runningPod(uj))
      const pauses: Array<number | undefined> = []
      for (let i = 0; i <= RUNNING_RESULT_READS_MS.length; i++)
        pauses.push(((await w.reconciler.reconcile(uj.metadata.name)) || {}).requeueAfterMs)
      // split-pdf counts pages: its progress is still read every PROGRESS_POLL_MS.
      expect(pauses).toEqual([...RUNNING_RESULT_READS_MS, PROGRESS_POLL_MS])
      store.state.stored = true
      await w.reconciler.reconcile(uj.metadata.name)
      expect(w.statuses).toEqual([])
    })

    it('reads on the slower schedule while the pod does not show the runner running, and densely from its start', async () => {
      const uj = utilityJob({}, { state: 'running' } as UtilityJobResource['status'])
      const store = manifestStore(uj)
      const w = world({ uj, jobs: [jobFor(uj, false)], storage: store.client })
      w.pods.set('p', { ...runningPod(uj), status: { phase: 'Pending' } } as V1Pod)
      const pause = async () => ((await w.reconciler.reconcile(uj.metadata.name)) || {}).requeueAfterMs
      expect([await pause(), await pause(), await pause(), await pause()]).toEqual(EARLY_RESULT_READS_MS.slice(0, 4))
      const reads = store.reads()
      w.pods.set('p', runningPod(uj))
      expect([await pause(), await pause()]).toEqual(RUNNING_RESULT_READS_MS.slice(0, 2))
      expect(store.reads()).toBe(reads + 2)
      store.state.stored = true
      await w.reconciler.reconcile(uj.metadata.name)
      expect(w.statuses.at(-1)?.status).toEqual(expect.objectContaining({ state: 'succeeded' }))
    })

    it('reads no manifest early while jobs of its utility wait for a slot: the exit decides, as it frees the slot', async () => {
      const uj = utilityJob({}, { state: 'running' } as UtilityJobResource['status'])
      const store = manifestStore(uj)
      store.state.stored = true
      const w = world({ uj, jobs: [jobFor(uj, false)], storage: store.client, waiting: true })
      w.pods.set('p', runningPod(uj))
      // split-pdf counts pages: only its progress is read, at its own pace.
      expect(await w.reconciler.reconcile(uj.metadata.name)).toEqual({ requeueAfterMs: PROGRESS_POLL_MS })
      expect(store.reads()).toBe(0)
      expect(w.statuses).toEqual([])
    })

    it('reads an oversize manifest early once, not on every pass, and leaves it to the exit', async () => {
      const uj = utilityJob({}, { state: 'running' } as UtilityJobResource['status'])
      const store = endless(400 * 1024 * 1024, resultObjectKey(uj.spec.jobId))
      const w = world({ uj, jobs: [jobFor(uj, false)], storage: store.client })
      w.pods.set('p', runningPod(uj))
      await w.reconciler.reconcile(uj.metadata.name)
      const once = store.pulled.bytes
      expect(once).toBeLessThanOrEqual(MAX_RESULT_MANIFEST_BYTES + 2 * 65_536)
      for (let i = 0; i < 3; i++) await w.reconciler.reconcile(uj.metadata.name)
      expect(store.pulled.bytes).toBe(once)
      expect(w.statuses).toEqual([])
    })

    it('fails a job whose result manifest is 400 MB as internal, having read no more than its bound', async () => {
      const uj = utilityJob({}, { state: 'running' } as UtilityJobResource['status'])
      const store = endless(400 * 1024 * 1024)
      const w = world({ uj, jobs: [jobFor(uj, true)], storage: store.client })
      await w.reconciler.reconcile(uj.metadata.name)
      expect(w.statuses.map((x) => x.status)).toEqual([
        expect.objectContaining({
          state: 'failed',
          error: { code: 'internal', message: "The job's result could not be accepted." },
        }),
      ])
      expect(store.pulled.bytes).toBeLessThanOrEqual(MAX_RESULT_MANIFEST_BYTES + 2 * 65_536)
    })

    it('fails a running job whose progress report is oversize as internal and stops its Job', async () => {
      const uj = utilityJob({ utility: 'zip-files' }, { state: 'running' } as UtilityJobResource['status'])
      const store = endless(50 * 1024 * 1024, progressObjectKey(uj.spec.jobId))
      const w = world({ uj, jobs: [jobFor(uj, false)], storage: store.client })
      w.pods.set('p', runningPod(uj))
      await w.reconciler.reconcile(uj.metadata.name)
      expect(w.statuses.map((x) => x.status!.state)).toEqual(['failed'])
      expect(w.writes).toContain(`delete job ${jobNameFor(uj)}`)
      expect(store.pulled.bytes).toBeLessThanOrEqual(MAX_PROGRESS_BYTES + 2 * 65_536)
    })
  })
})

describe('the status to write', () => {
  const running = { state: 'running', timings: {} } as unknown as UtilityJobResource['status']

  it('carries the callback state over as it is, names the batch Job and answers the generation', () => {
    const callback = { url: 'https://example.com/hook', status: 'pending', attempts: 2 }
    const uj = utilityJob({}, { state: 'queued', callback } as unknown as UtilityJobResource['status'])
    const body = statusToWrite(uj, running!, { admitted: false, now: NOW })
    expect(body.status).toMatchObject({ state: 'running', callback, jobName: jobNameFor(uj), observedGeneration: 1 })
  })

  it('counts an earlier admission: Admitted stays True when this pass did not admit', () => {
    const first = statusToWrite(utilityJob(), { state: 'queued' } as UtilityJobResource['status'] & object, {
      admitted: true,
      now: NOW,
    })
    const again = statusToWrite(first, { state: 'queued' } as UtilityJobResource['status'] & object, {
      admitted: false,
      now: NOW + 1000,
    })
    expect(again.status!.conditions!.find((c) => c.type === 'Admitted')).toMatchObject({ status: 'True' })
  })
})
