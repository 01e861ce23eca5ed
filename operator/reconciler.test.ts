import type { BatchV1Api, CustomObjectsApi, ObjectCache, V1Job, V1Pod } from '@kubernetes/client-node'
import type { Client } from 'minio'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { jobNameFor } from './desired-job.js'
import { type JobRecordWriter, UtilityJobReconciler } from './reconciler.js'
import { runnerSettings } from '../test/support/runner-settings.js'

const NS = 'dutil'
const NOW = Date.parse('2026-11-24T10:00:00.000Z')

const settings = runnerSettings()

function utilityJob(spec: Partial<UtilityJobResource['spec']> = {}, status?: UtilityJobResource['status']): UtilityJobResource {
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

const cacheOf = <T extends { metadata?: { name?: string } }>(items: Map<string, T>) => ({ get: (name: string) => items.get(name), list: () => [...items.values()] }) as unknown as ObjectCache<T>

/**
 * The reconciler against fakes of the world it reads (caches of UtilityJobs, Jobs and Pods) and
 * of the APIs it writes: every write is recorded in order, with the fence calls between them.
 */
function world(opts: { uj: UtilityJobResource; jobs?: V1Job[]; mayStart?: boolean }) {
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
    storage: {} as Client,
    fence: () => writes.push('fence'),
    admission: { mayStart: () => opts.mayStart ?? true, schedule: () => void scheduled++ },
    issueCredentials: async () => ({ accessKey: 'ASIATEMP', secretKey: 's', sessionToken: 't', expiresAt: '2026-11-24T10:30:00.000Z' }),
    bucket: 'dutil',
    runner: settings,
    log: pino({ level: 'silent' }),
    now: () => NOW,
    records,
    graceMs: 60_000,
  })
  return { reconciler, writes, created, statuses, jobs, utilityJobs, scheduled: () => scheduled }
}

describe('the reconciler pass', () => {
  it('gives a queued job exactly one batch Job, owned by it, then records and writes Admitted, each write behind the fence', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.created).toHaveLength(1)
    const job = w.created[0]
    expect(job.metadata!.name).toBe(jobNameFor(uj))
    expect(job.metadata!.ownerReferences).toEqual([expect.objectContaining({ kind: 'UtilityJob', name: uj.metadata.name, uid: 'uid-1', controller: true })])
    // The row is written before the status, and the fence comes before each write.
    expect(w.writes).toEqual(['fence', 'record queued', 'fence', 'fence', `create job ${jobNameFor(uj)}`, 'fence', 'record queued', 'fence', 'status queued'])
    const conditions = w.statuses[0].status!.conditions!
    expect(conditions.find((c) => c.type === 'Admitted')).toMatchObject({ status: 'True' })
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

  it('leaves a job above its utility limit queued: no Job, no status write, admission scheduled', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj, mayStart: false })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.created).toEqual([])
    expect(w.statuses).toEqual([])
    expect(w.scheduled()).toBe(1)
  })

  it('cancels a job still queued: its Job goes (by name, whatever the cache says) and the status says cancelled', async () => {
    const uj = utilityJob({ cancelRequested: true } as Partial<UtilityJobResource['spec']>, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.created).toEqual([])
    expect(w.writes).toContain(`delete job ${jobNameFor(uj)}`)
    expect(w.statuses.map((s) => s.status!.state)).toEqual(['cancelled'])
  })

  it('does not touch a Job of the same name that another object owns, and looks again later', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const foreign = { metadata: { name: jobNameFor(uj), namespace: NS, ownerReferences: [{ apiVersion: 'dutil.io/v1alpha1', kind: 'UtilityJob', name: 'other', uid: 'uid-other' }] } } as V1Job
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
    expect(w.statuses[0].status).toMatchObject({ state: 'failed', error: { code: 'internal', message: 'This utility is not available.' } })
  })

  it('forgets a job that is gone from the cache', async () => {
    const uj = utilityJob({}, { state: 'queued' } as UtilityJobResource['status'])
    const w = world({ uj })
    w.utilityJobs.clear()
    expect(await w.reconciler.reconcile(uj.metadata.name)).toBeUndefined()
    expect(w.writes).toEqual([])
  })
})
