import {
  ApiException,
  type BatchV1Api,
  type CoreV1Api,
  type CustomObjectsApi,
  type ObjectCache,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node'
import type { Client } from 'minio'
import pino from 'pino'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { LABELS } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import {
  MAX_PROGRESS_BYTES,
  progressObjectKey,
  resultObjectKey,
  type PoolAssignment,
  type PoolJobState,
} from '../contract/runner-protocol.js'
import { GrantRefused } from '../contract/storage-grant.js'
import type { IssueCredentials } from './runner-credentials.js'
import { outputKey } from '../contract/storage-keys.js'
import { runnerSettings } from '../test/support/runner-settings.js'
import type { AssignAnswer, PoolClient } from './pool-client.js'
import { POOL_DEADLINE_GRACE_MS, RUNNING_STATUS_AFTER_MS } from './pool-run.js'
import { UtilityJobReconciler } from './reconciler.js'
import { RunnerPools } from './runner-pools.js'
import { UnfinishedJobs } from './unfinished-jobs.js'
import { desiredPoolPod, POOL_SPEC_ANNOTATION, tenantHash, wantedSpecHash } from './pool-pod.js'
import { catalog } from '../runners/catalog.js'
import { tenantOf } from '../contract/tenants.js'

const NS = 'dutil'
const NOW = Date.parse('2026-11-26T10:00:00.000Z')
const POOL = { size: 2, spare: 1, restartEvery: 100, idleSeconds: 300 }
const settings = runnerSettings({ pools: { 'html-pdf': POOL, 'split-pdf': POOL } })

function utilityJob(
  status?: Partial<NonNullable<UtilityJobResource['status']>>,
  name = 'job-01m8pool',
): UtilityJobResource {
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name, namespace: NS, uid: `uid-${name}`, resourceVersion: '10', generation: 1 },
    spec: {
      jobId: `job_${name.slice(4).toUpperCase()}`,
      utility: 'html-pdf',
      mode: 'async',
      apiKeyId: 'key_1',
      apiKeyName: 'k',
      createdAt: new Date(NOW - 1000).toISOString(),
      inputKey: '_jobs/x/input.json',
      metadata: null,
    },
    ...(status ? { status: status as UtilityJobResource['status'] } : {}),
  } as UtilityJobResource
}

/** The tenant of the jobs utilityJob() makes. */
const TENANT = tenantHash(tenantOf(utilityJob().spec))

/** The spec hash the settings give a pool pod: the world's pods are made from the current settings. */
const HASH = wantedSpecHash(
  desiredPoolPod(catalog.get('html-pdf')!, settings, settings.pools!['html-pdf'], 'x', NS, ''),
)

const poolPod = (name: string, tenant?: string): V1Pod => ({
  metadata: {
    name,
    namespace: NS,
    uid: `uid-${name}`,
    resourceVersion: '5',
    annotations: { [POOL_SPEC_ANNOTATION]: HASH },
    labels: { [LABELS.pool]: 'html-pdf', ...(tenant ? { [LABELS.poolTenant]: tenant } : {}) },
  },
  status: { phase: 'Running', podIP: '10.0.0.9', conditions: [{ type: 'Ready', status: 'True' }] },
})

const cacheOf = <T extends { metadata?: { name?: string } }>(items: Map<string, T>) =>
  ({ get: (name: string) => items.get(name), list: () => [...items.values()] }) as unknown as ObjectCache<T>

/** The reconciler with a pool of two pods, a pool client the test answers for, and a stored manifest. */
function world(
  uj: UtilityJobResource,
  o: {
    state?: PoolJobState | 'unknown'
    assign?: AssignAnswer
    others?: UtilityJobResource[]
    /** The tenants the two pods are bound to (none: generic). */
    tenants?: [string?, string?]
    /** The progress report the runner wrote, if any. */
    progress?: unknown
    /** The pod's answer to a long poll (a state request that waits for the job's end); else `state`. */
    longPoll?: Promise<PoolJobState | 'unknown' | 'unreachable'>
    issueCredentials?: IssueCredentials
    /** Pods the API server holds bound to another tenant while the cache still shows them generic. */
    boundMeanwhile?: Record<string, V1Pod>
  } = {},
) {
  const writes: string[] = []
  /** The reconciler's clock: a test moves it on. */
  const clock = { now: NOW }
  const utilityJobs = new Map([uj, ...(o.others ?? [])].map((j) => [j.metadata.name, j]))
  const pods = new Map(
    [poolPod('dutil-pool-html-pdf-0', o.tenants?.[0]), poolPod('dutil-pool-html-pdf-1', o.tenants?.[1])].map((p) => [
      p.metadata!.name!,
      p,
    ]),
  )
  const assigned: PoolAssignment[] = []
  const statuses: UtilityJobResource[] = []
  const woken: string[] = []
  const longPolls: string[] = []
  const client: PoolClient = {
    assign: async (pod, a) => {
      writes.push(`assign ${pod.metadata!.name}`)
      assigned.push(a)
      return o.assign ?? 'taken'
    },
    // A pod knows only the job it was given (the real client checks the id it is answered about).
    state: async (pod, jobId, waitMs) => {
      const known = (s: PoolJobState | 'unknown' | 'unreachable' | undefined) =>
        s === undefined || (typeof s === 'object' && s.jobId !== jobId) ? 'unknown' : s
      if (!waitMs) return known(o.state)
      longPolls.push(pod.metadata!.name!)
      return known(await (o.longPoll ?? o.state))
    },
  }
  const core = {
    createNamespacedPod: async () => ({}),
    deleteNamespacedPod: async ({ name }: { name: string }) => {
      writes.push(`delete pod ${name}`)
      return {}
    },
    patchNamespacedPod: async ({ name, body }: { name: string; body: V1Pod }) => {
      writes.push(`bind ${name}`)
      // The API server's pod: bound to another tenant meanwhile (a newer version than the cache's), or the cache's.
      const pod = o.boundMeanwhile?.[name] ?? pods.get(name)!
      const precondition = body.metadata!.resourceVersion
      if (precondition !== undefined && precondition !== (pod.metadata!.resourceVersion ?? '5'))
        throw new ApiException(409, 'the object has been modified', {}, {})
      // Without a precondition a merge patch would overwrite another tenant's binding.
      pod.metadata!.labels = { ...pod.metadata!.labels, ...body.metadata!.labels }
      return pod
    },
  } as unknown as CoreV1Api
  const pools = new RunnerPools({
    namespace: NS,
    pods: cacheOf(pods),
    utilityJobs: cacheOf(utilityJobs),
    // The test changes jobs in place: the index is made from them as they are at each look.
    jobs: {
      runnerPods: () => UnfinishedJobs.of(utilityJobs.values()).runnerPods(),
      tenantsAtWork: (slug) => UnfinishedJobs.of(utilityJobs.values()).tenantsAtWork(slug),
    },
    core,
    runner: settings,
    client,
    wake: (names) => woken.push(...names),
    log: pino({ level: 'silent' }),
  })
  const manifest = {
    files: [
      {
        key: outputKey('html-pdf', Date.parse(uj.spec.createdAt), uj.spec.jobId, 'page.pdf'),
        name: 'page.pdf',
        size: 10,
        contentType: 'application/pdf',
      },
    ],
    extras: {},
    startedAt: new Date(NOW - 500).toISOString(),
    upstreamMs: 80,
    storageMs: 20,
  }
  /** The objects the operator read from storage. */
  const reads: string[] = []
  const storage = {
    getObject: async (_bucket: string, key: string) => {
      reads.push(key)
      if (key === progressObjectKey(uj.spec.jobId) && o.progress)
        return Readable.from([Buffer.from(JSON.stringify(o.progress))])
      if (key !== resultObjectKey(uj.spec.jobId))
        throw Object.assign(new Error('The specified key does not exist.'), { code: 'NoSuchKey' })
      return Readable.from([Buffer.from(JSON.stringify(manifest))])
    },
  } as unknown as Client
  const events: Array<{ reason: string; note: string }> = []
  const reconciler = new UtilityJobReconciler({
    events: { record: (_uj, e) => events.push({ reason: e.reason, note: e.note }) },
    namespace: NS,
    utilityJobs: cacheOf(utilityJobs),
    jobs: cacheOf(new Map<string, V1Job>()),
    pods: cacheOf(pods),
    batch: {
      createNamespacedJob: async () => {
        writes.push('create job')
        return {}
      },
    } as unknown as BatchV1Api,
    custom: {
      replaceNamespacedCustomObjectStatus: async ({ body }: { body: UtilityJobResource }) => {
        writes.push(`status ${body.status!.state}`)
        statuses.push(body)
        return { ...body, metadata: { ...body.metadata, resourceVersion: '11' } }
      },
    } as unknown as CustomObjectsApi,
    storage,
    admission: { mayStart: () => true, schedule: () => {}, wasHeld: () => false },
    issueCredentials:
      o.issueCredentials ?? (async () => ({ accessKey: 'ASIATEMP', secretKey: 's', sessionToken: 't', expiresAt: '' })),
    bucket: 'dutil',
    runner: settings,
    log: pino({ level: 'silent' }),
    now: () => clock.now,
    records: { transition: async () => {}, callback: async () => {} },
    graceMs: 60_000,
    pools,
  })
  return {
    reconciler,
    writes,
    assigned,
    statuses,
    pods,
    woken,
    pools,
    longPolls,
    events,
    utilityJobs,
    clock,
    reads,
    manifest,
  }
}

/** A split-pdf job (it counts pages) running on pool pod 0 for half a second. */
function runningSplitJob(): UtilityJobResource {
  const base = utilityJob({
    state: 'running',
    startedAt: new Date(NOW - 500).toISOString(),
    runnerPod: 'dutil-pool-html-pdf-0',
  })
  return { ...base, spec: { ...base.spec, utility: 'split-pdf' } } as UtilityJobResource
}

describe('a job of a pooled utility', () => {
  it('is handed to an idle pool pod with its own credentials and deadline, never a batch Job, and runs from there', async () => {
    const uj = utilityJob({ state: 'queued' })
    const w = world(uj, { state: { jobId: uj.spec.jobId, state: 'running' }, longPoll: new Promise(() => {}) })
    // Handed over, nothing written: a job that ends within a second is told by its outcome alone.
    expect(await w.reconciler.reconcile(uj.metadata.name)).toEqual({ requeueAfterMs: RUNNING_STATUS_AFTER_MS })
    expect(w.writes).toEqual(['bind dutil-pool-html-pdf-0', 'assign dutil-pool-html-pdf-0'])
    expect(w.events).toEqual([])
    expect(w.pods.get('dutil-pool-html-pdf-0')!.metadata!.labels![LABELS.poolTenant]).toBe(TENANT)
    // Before the second is up a pass writes nothing; once it is, the status says it runs, and where.
    w.clock.now = NOW + 400
    expect(await w.reconciler.reconcile(uj.metadata.name)).toEqual({ requeueAfterMs: 600 })
    expect(w.writes).toHaveLength(2)
    w.clock.now = NOW + RUNNING_STATUS_AFTER_MS
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes.slice(2)).toEqual(['status running'])
    expect(w.assigned[0]).toMatchObject({
      jobId: uj.spec.jobId,
      utility: 'html-pdf',
      deadlineSeconds: 900,
      credentials: { accessKey: 'ASIATEMP', secretKey: 's', sessionToken: 't' },
    })
    expect(w.assigned[0].tenant).toBe(TENANT)
    const status = w.statuses[0].status!
    expect(status.runnerPod).toBe('dutil-pool-html-pdf-0')
    // Started when the pod took it, not when the status said so.
    expect(status.startedAt).toBe(new Date(NOW).toISOString())
    expect(status.jobName).toBeUndefined()
    expect(status.conditions!.find((c) => c.type === 'Admitted')).toMatchObject({
      status: 'True',
      reason: 'PoolPodAssigned',
    })
    // One Event tells the hand-over and the start (the pod runs it from now).
    expect(w.events).toEqual([
      {
        reason: 'PoolPodAssigned',
        note: 'Handed to pool runner pod dutil-pool-html-pdf-0, which runs it from now (time limit 900 s).',
      },
    ])
  })

  it("goes to a pod bound to its tenant before a generic one, and never to another tenant's", async () => {
    const uj = utilityJob({ state: 'queued' })
    const own = world(uj, { tenants: [undefined, TENANT] })
    await own.reconciler.reconcile(uj.metadata.name)
    expect(own.writes).toEqual(['assign dutil-pool-html-pdf-1'])
    const other = tenantHash('key:someone-else')
    const full = world(uj, { tenants: [other, other] })
    expect(await full.reconciler.reconcile(uj.metadata.name)).toEqual({ requeueAfterMs: 200 })
    expect(full.writes).toEqual([])
    // The upkeep makes room: the least recently used idle pod of the other tenant goes (no pod is made
    // beyond the size), and a generic one takes its place once it is gone.
    full.pools.lead(new AbortController().signal)
    await full.pools.sync()
    expect(full.writes).toEqual(['delete pod dutil-pool-html-pdf-0'])
  })

  it('runs as a batch Job, taking no pod, when every pod of the full pool is another tenant’s and used lately', async () => {
    const uj = utilityJob({ state: 'queued' })
    const others = ['job-01m8oth0', 'job-01m8oth1'].map((name) => {
      const j = utilityJob({ state: 'queued' }, name)
      return { ...j, spec: { ...j.spec, apiKeyId: 'key_2' } } as UtilityJobResource
    })
    const w = world(uj, { others })
    const other = tenantHash(tenantOf(others[0].spec))
    // Another tenant's jobs took both pods a moment ago (and finished).
    const taken = [
      await w.pools.claim('html-pdf', 'job-01m8oth0', other),
      await w.pools.claim('html-pdf', 'job-01m8oth1', other),
    ]
    expect(taken.map((p) => p?.metadata?.name)).toEqual(['dutil-pool-html-pdf-0', 'dutil-pool-html-pdf-1'])
    w.pools.handBack('job-01m8oth0', taken[0]!)
    w.pools.handBack('job-01m8oth1', taken[1]!)
    w.writes.length = 0
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes).toEqual(['create job', 'status queued'])
    expect(w.statuses[0].status).toMatchObject({ state: 'queued', jobName: expect.any(String) })
    expect(w.statuses[0].status?.runnerPod).toBeUndefined()
    expect(w.events.map((e) => e.reason)).toEqual(['JobCreated'])
    // It waits for no pod: the upkeep takes none of the other tenant's.
    w.pools.lead(new AbortController().signal)
    await w.pools.sync()
    expect(w.writes).toEqual(['create job', 'status queued'])
    // And its next pass follows its batch Job, never a pod, though the watch shows no Job yet.
    const next = { ...w.statuses[0], metadata: { ...w.statuses[0].metadata, resourceVersion: '12' } }
    w.utilityJobs.set(uj.metadata.name, next)
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes.filter((x) => x.startsWith('assign'))).toEqual([])
  })

  it('goes back to waiting when the pod does not take it, and a retiring pod goes at once', async () => {
    const uj = utilityJob({ state: 'queued' })
    const w = world(uj, { assign: 'busy' })
    expect(await w.reconciler.reconcile(uj.metadata.name)).toEqual({ requeueAfterMs: 200 })
    expect(w.statuses).toEqual([])
    const retired = world(uj, { assign: 'retired', tenants: [TENANT, TENANT] })
    await retired.reconciler.reconcile(uj.metadata.name)
    expect(retired.writes).toEqual(['assign dutil-pool-html-pdf-0', 'delete pod dutil-pool-html-pdf-0'])
    expect(retired.statuses).toEqual([])
  })

  it('fails storage_error when storage refuses its grant, and its pod, handed nothing, takes the next job at once', async () => {
    const uj = utilityJob({ state: 'queued' })
    const next = utilityJob({ state: 'queued' }, 'job-01m8nxt0')
    const w = world(uj, {
      others: [next],
      issueCredentials: async (job) => {
        if (job.metadata.name === uj.metadata.name)
          throw new GrantRefused("Storage refused the job's access grant (AccessDenied).")
        return { accessKey: 'ASIATEMP', secretKey: 's', sessionToken: 't', expiresAt: '' }
      },
    })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes).toEqual(['bind dutil-pool-html-pdf-0', 'status failed'])
    expect(w.statuses[0].status).toMatchObject({ state: 'failed', error: { code: 'storage_error' } })
    await w.reconciler.reconcile(next.metadata.name)
    expect(w.writes.slice(2)).toEqual(['assign dutil-pool-html-pdf-0'])
  })

  it('never takes a pod another leader bound to another tenant meanwhile: the bind is refused, nothing is handed', async () => {
    const uj = utilityJob({ state: 'queued' })
    const other = tenantHash('key:someone-else')
    const taken = poolPod('dutil-pool-html-pdf-0', other)
    taken.metadata!.resourceVersion = '9'
    const w = world(uj, { boundMeanwhile: { 'dutil-pool-html-pdf-0': taken } })
    expect(await w.reconciler.reconcile(uj.metadata.name)).toEqual({ requeueAfterMs: 200 })
    expect(w.writes).toEqual(['bind dutil-pool-html-pdf-0'])
    expect(w.assigned).toEqual([])
    expect(taken.metadata!.labels![LABELS.poolTenant]).toBe(other)
  })

  it('succeeds from its checked manifest once its pod says so, and frees the pod', async () => {
    const uj = utilityJob({
      state: 'running',
      startedAt: new Date(NOW - 500).toISOString(),
      runnerPod: 'dutil-pool-html-pdf-1',
    })
    const w = world(uj, { state: { jobId: uj.spec.jobId, state: 'succeeded' } })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes).toEqual(['status succeeded'])
    expect(w.statuses[0].status).toMatchObject({ state: 'succeeded', runnerPod: 'dutil-pool-html-pdf-1' })
    expect(w.statuses[0].status!.result!.files.map((f) => f.name)).toEqual(['page.pdf'])
  })

  it('succeeds from the manifest its pod answered with its end, reading nothing from storage; one naming another job’s file fails internal', async () => {
    const running = () =>
      utilityJob({ state: 'running', startedAt: new Date(NOW - 500).toISOString(), runnerPod: 'dutil-pool-html-pdf-1' })
    const uj = running()
    const probe = world(uj)
    const answered = { ...probe.manifest, upstreamMs: 33 }
    const w = world(uj, { state: { jobId: uj.spec.jobId, state: 'succeeded', result: answered } })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes).toEqual(['status succeeded'])
    expect(w.statuses[0].status).toMatchObject({ state: 'succeeded', timings: { upstreamMs: 33 } })
    expect(w.statuses[0].status!.result!.files.map((f) => f.name)).toEqual(['page.pdf'])
    expect(w.reads).toEqual([])
    const other = running()
    const bad = world(other, {
      state: {
        jobId: other.spec.jobId,
        state: 'succeeded',
        result: { ...answered, files: [{ ...answered.files[0], key: 'html-pdf/2026-11-26/job_OTHER/page.pdf' }] },
      },
    })
    await bad.reconciler.reconcile(other.metadata.name)
    expect(bad.statuses[0].status).toMatchObject({ state: 'failed', error: { code: 'internal' } })
    expect(bad.reads).toEqual([])
  })

  it('finishes when its pod answers the long poll at the job’s end, even if the pod has gone since', async () => {
    const uj = utilityJob({ state: 'queued' })
    let end!: (s: PoolJobState) => void
    const w = world(uj, { longPoll: new Promise((r) => (end = r)) })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes).toEqual(['bind dutil-pool-html-pdf-0', 'assign dutil-pool-html-pdf-0'])
    // Handed over: its pod is asked once to answer at the job's end, not again by the next passes.
    expect(w.longPolls).toEqual(['dutil-pool-html-pdf-0'])
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.longPolls).toEqual(['dutil-pool-html-pdf-0'])
    // Another process with the status the job writes once it has run a while: the same.
    const handed = {
      ...uj,
      status: { state: 'running' as const, startedAt: new Date(NOW).toISOString(), runnerPod: 'dutil-pool-html-pdf-0' },
      metadata: { ...uj.metadata, resourceVersion: '11' },
    } as UtilityJobResource
    const again = world(handed, {
      state: { jobId: uj.spec.jobId, state: 'running' },
      longPoll: new Promise(() => {}),
    })
    await again.reconciler.reconcile(uj.metadata.name)
    await again.reconciler.reconcile(uj.metadata.name)
    expect(again.longPolls).toEqual(['dutil-pool-html-pdf-0'])
    expect(w.woken).toEqual([])
    end({ jobId: uj.spec.jobId, state: 'succeeded' })
    await new Promise((r) => setImmediate(r))
    expect(w.woken).toEqual([uj.metadata.name])
    // The retiring pod exits once it has told the end: the job succeeds from what it told, in one
    // write that names its pod and its start, and one Event.
    w.pods.delete('dutil-pool-html-pdf-0')
    w.clock.now = NOW + 300
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes).toEqual(['bind dutil-pool-html-pdf-0', 'assign dutil-pool-html-pdf-0', 'status succeeded'])
    expect(w.statuses.at(-1)!.status).toMatchObject({
      state: 'succeeded',
      runnerPod: 'dutil-pool-html-pdf-0',
      startedAt: new Date(NOW).toISOString(),
      timings: { queueMs: 1000, totalMs: 1300 },
    })
    expect(w.statuses.at(-1)!.status!.conditions!.find((c) => c.type === 'Admitted')).toMatchObject({
      status: 'True',
      reason: 'PoolPodAssigned',
    })
    expect(w.events).toEqual([
      { reason: 'Succeeded', note: 'Succeeded in 1300 ms on pool pod dutil-pool-html-pdf-0: 1 file stored.' },
    ])
  })

  it('is looked at as soon as its pod goes, and fails upstream_error', async () => {
    const uj = utilityJob({ state: 'queued' })
    const w = world(uj, { longPoll: new Promise(() => {}) })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.longPolls).toEqual(['dutil-pool-html-pdf-0'])
    // Another pod changing wakes nobody; its own pod deleted wakes the job.
    w.pools.podChanged(w.pods.get('dutil-pool-html-pdf-1')!)
    expect(w.woken).toEqual([])
    const pod = w.pods.get('dutil-pool-html-pdf-0')!
    w.pods.delete('dutil-pool-html-pdf-0')
    w.pools.podChanged(pod)
    expect(w.woken).toEqual([uj.metadata.name])
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.statuses.at(-1)!.status).toMatchObject({
      state: 'failed',
      error: { code: 'upstream_error', message: expect.stringContaining('The runner stopped before the job finished') },
    })
  })

  it("fails with the runner's classified failure", async () => {
    const uj = utilityJob({
      state: 'running',
      startedAt: new Date(NOW - 500).toISOString(),
      runnerPod: 'dutil-pool-html-pdf-1',
    })
    const failure = {
      code: 'upstream_rejected' as const,
      message: 'Loading the page failed: the server answered 404.',
      upstreamStatus: 404,
    }
    const w = world(uj, { state: { jobId: uj.spec.jobId, state: 'failed', failure } })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.statuses[0].status).toMatchObject({ state: 'failed', error: failure })
  })

  it('fails upstream_error when its pod is gone, or says it never had it', async () => {
    const running = {
      state: 'running' as const,
      startedAt: new Date(NOW - 500).toISOString(),
      runnerPod: 'dutil-pool-html-pdf-1',
    }
    const gone = world(utilityJob(running))
    gone.pods.delete('dutil-pool-html-pdf-1')
    await gone.reconciler.reconcile('job-01m8pool')
    const renewed = world(utilityJob(running), { state: 'unknown' })
    await renewed.reconciler.reconcile('job-01m8pool')
    for (const w of [gone, renewed])
      expect(w.statuses[0].status).toMatchObject({
        state: 'failed',
        error: {
          code: 'upstream_error',
          message: expect.stringContaining('The runner stopped before the job finished'),
        },
      })
  })

  it('keeps polling a running job within its time limit, and past it (and the grace) deletes the pod and fails upstream_timeout', async () => {
    const at = (msAgo: number) =>
      utilityJob({
        state: 'running',
        startedAt: new Date(NOW - msAgo).toISOString(),
        runnerPod: 'dutil-pool-html-pdf-0',
      })
    const running = (uj: UtilityJobResource) =>
      world(uj, { state: { jobId: uj.spec.jobId, state: 'running' }, longPoll: new Promise(() => {}) })
    const within = running(at(900_000))
    // Its pod is asked to answer at the job's end; meanwhile the job is looked at now and then.
    expect(await within.reconciler.reconcile('job-01m8pool')).toEqual({ requeueAfterMs: 5_000 })
    expect(within.longPolls).toEqual(['dutil-pool-html-pdf-0'])
    expect(within.writes).toEqual([])
    // Near its time limit, the next look is at the limit (and the grace).
    const near = running(at(900_000 + POOL_DEADLINE_GRACE_MS - 1_000))
    expect(await near.reconciler.reconcile('job-01m8pool')).toEqual({ requeueAfterMs: 1_010 })
    const past = running(at(900_000 + POOL_DEADLINE_GRACE_MS + 1))
    await past.reconciler.reconcile('job-01m8pool')
    // The failure first (as in job mode: a failed delete never leaves the job unfinished), then its pod goes.
    expect(past.writes).toEqual(['status failed', 'delete pod dutil-pool-html-pdf-0'])
    expect(past.statuses[0].status!.error).toEqual({
      code: 'upstream_timeout',
      message: 'The utility did not finish within its time limit of 900 s.',
    })
  })

  it('copies the runner’s progress report to the status while the job runs, as in job mode', async () => {
    const uj = runningSplitJob()
    const w = world(uj, {
      state: { jobId: uj.spec.jobId, state: 'running' },
      progress: { done: 3, total: 10, at: new Date(NOW - 100).toISOString() },
    })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes).toEqual(['status running'])
    expect(w.statuses[0].status).toMatchObject({
      state: 'running',
      runnerPod: 'dutil-pool-html-pdf-0',
      progress: { done: 3, total: 10, unit: 'pages' },
    })
  })

  it('fails a running job whose progress report is oversize as internal, then deletes its pod, as in job mode', async () => {
    const uj = runningSplitJob()
    const w = world(uj, {
      state: { jobId: uj.spec.jobId, state: 'running' },
      progress: { done: 3, total: 10, note: 'x'.repeat(MAX_PROGRESS_BYTES) },
    })
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes).toEqual(['status failed', 'delete pod dutil-pool-html-pdf-0'])
    expect(w.statuses[0].status).toMatchObject({
      state: 'failed',
      runnerPod: 'dutil-pool-html-pdf-0',
      error: { code: 'internal', message: "The job's result could not be accepted." },
    })
  })

  it('is found on its pod by a new leader when another leader handed it over and wrote nothing: never handed twice', async () => {
    const uj = utilityJob({ state: 'queued' })
    // The earlier leader bound pod 1 to the tenant and handed it the job, then stopped.
    const w = world(uj, { tenants: [undefined, TENANT], state: { jobId: uj.spec.jobId, state: 'running' } })
    w.pools.lead(new AbortController().signal)
    expect(await w.reconciler.reconcile(uj.metadata.name)).toEqual({ requeueAfterMs: RUNNING_STATUS_AFTER_MS })
    expect(w.writes).toEqual([])
    expect(w.assigned).toEqual([])
    expect(w.longPolls).toEqual(['dutil-pool-html-pdf-1'])
    w.clock.now = NOW + RUNNING_STATUS_AFTER_MS
    await w.reconciler.reconcile(uj.metadata.name)
    expect(w.writes).toEqual(['status running'])
    expect(w.statuses[0].status).toMatchObject({ state: 'running', runnerPod: 'dutil-pool-html-pdf-1' })
    // A job accepted after this leader began (a minute's margin for clocks) is never asked about:
    // no other leader can have handed it over.
    const later = utilityJob({ state: 'queued' }, 'job-01m8late')
    later.spec.createdAt = new Date(Date.now() + 61_000).toISOString()
    const fresh = world(later, { tenants: [undefined, TENANT], state: { jobId: later.spec.jobId, state: 'running' } })
    fresh.pools.lead(new AbortController().signal)
    await fresh.reconciler.reconcile(later.metadata.name)
    expect(fresh.assigned.map((a) => a.jobId)).toEqual([later.spec.jobId])
  })

  it('waits while every pod holds a job, and is woken as soon as one finishes', async () => {
    const on = (pod: string, name: string) =>
      utilityJob({ state: 'running', startedAt: new Date(NOW - 500).toISOString(), runnerPod: pod }, name)
    const a = on('dutil-pool-html-pdf-0', 'job-01m8aaaa')
    const b = on('dutil-pool-html-pdf-1', 'job-01m8bbbb')
    const queued = utilityJob({ state: 'queued' }, 'job-01m8cccc')
    const w = world(a, {
      state: { jobId: a.spec.jobId, state: 'succeeded' },
      others: [b, queued],
      tenants: [TENANT, TENANT],
    })
    expect(await w.reconciler.reconcile(queued.metadata.name)).toEqual({ requeueAfterMs: 200 })
    expect(w.writes).toEqual([])
    await w.reconciler.reconcile(a.metadata.name)
    expect(w.writes).toEqual(['status succeeded'])
    expect(w.woken).toEqual([queued.metadata.name])
    // The watch still shows the finished job running: its pod is free all the same.
    await w.reconciler.reconcile(queued.metadata.name)
    expect(w.writes).toEqual(['status succeeded', 'assign dutil-pool-html-pdf-0'])
  })
})
