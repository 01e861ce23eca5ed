import type { V1Pod } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { LABELS } from '../contract/api-group.js'
import { POOL } from '../contract/runner-protocol.js'
import { catalog } from '../runners/catalog.js'
import { runnerSettings } from '../test/support/runner-settings.js'
import { desiredJob } from './desired-job.js'
import {
  choosePoolPod,
  desiredPoolPod,
  newPoolPodName,
  planPool,
  POOL_TAKE_IDLE_MS,
  poolRoom,
  POOL_SCRATCH,
  POOL_SPEC_ANNOTATION,
  podTenant,
  poolToken,
  tenantHash,
} from './pool-pod.js'

const htmlPdf = catalog.get('html-pdf')!
const pool = { size: 2, spare: 1, restartEvery: 50, idleSeconds: 120 }
const token = 'a'.repeat(64)

describe('desiredPoolPod', () => {
  const pod = desiredPoolPod(htmlPdf, runnerSettings(), pool, 'dutil-pool-html-pdf-x1', 'dutil', token)
  const [c] = pod.spec!.containers

  it('is a runner pod as job mode makes it, long-lived, running the pool program on its port', () => {
    const uj = {
      metadata: { name: 'job-x', namespace: 'dutil', uid: 'u' },
      spec: { jobId: 'job_X', utility: 'html-pdf', createdAt: '2026-01-01T00:00:00.000Z' },
    } as never
    const job = desiredJob(uj, htmlPdf, runnerSettings(), {
      accessKey: 'a',
      secretKey: 's',
      sessionToken: 't',
      expiresAt: '',
    })
    const jobPod = job.spec!.template.spec!
    expect(pod.metadata!.name).toBe('dutil-pool-html-pdf-x1')
    expect(pod.spec!.securityContext).toEqual(jobPod.securityContext)
    expect(pod.spec!.automountServiceAccountToken).toBe(false)
    expect(c.securityContext).toEqual(jobPod.containers[0].securityContext)
    expect(c.resources).toEqual(jobPod.containers[0].resources)
    expect(c.image).toBe(jobPod.containers[0].image)
    expect(c.command!.at(-1)).toBe('/app/dist/runners/html-pdf/bundle/pool.js')
    expect(c.ports).toEqual([{ name: 'pool', containerPort: POOL.port, protocol: 'TCP' }])
    expect(c.readinessProbe!.httpGet).toEqual({ path: '/healthz', port: POOL.port })
    expect(pod.spec!.restartPolicy).toBe('Never')
    // A longest life: the runner quota's Terminating scope counts it like every runner pod.
    expect(pod.spec!.activeDeadlineSeconds).toBe(POOL.maxLifeSeconds)
    // No job of its own: no job label, no storage credentials in its environment.
    expect(pod.metadata!.labels![LABELS.jobId]).toBeUndefined()
    expect(pod.metadata!.labels![LABELS.pool]).toBe('html-pdf')
    expect(c.env!.map((e) => e.name)).not.toContain('DUTIL_S3_ACCESS_KEY')
    expect(c.env).toContainEqual({ name: POOL.restartEveryEnv, value: '50' })
    expect(c.env).toContainEqual({ name: POOL.idleSecondsEnv, value: '120' })
    // Generic until its first job: no tenant.
    expect(podTenant(pod)).toBeNull()
    expect(poolToken(pod)).toBe(token)
  })

  it('gives every pool pod scratch space for its jobs’ directories, the utility’s own or a small one', () => {
    const split = desiredPoolPod(catalog.get('split-pdf')!, runnerSettings(), pool, 'n', 'dutil', token)
    expect(split.spec!.volumes).toEqual([{ name: 'scratch', emptyDir: { sizeLimit: POOL_SCRATCH } }])
    expect(split.spec!.containers[0].volumeMounts).toEqual([{ name: 'scratch', mountPath: '/tmp' }])
    expect(split.spec!.containers[0].env).toContainEqual({ name: 'TMPDIR', value: '/tmp' })
    expect(pod.spec!.volumes).toEqual([{ name: 'scratch', emptyDir: { sizeLimit: '1Gi' } }])
  })

  it('hashes its spec without the token: a new token is the same pod, other settings are not', () => {
    const again = desiredPoolPod(htmlPdf, runnerSettings(), pool, 'dutil-pool-html-pdf-x1', 'dutil', 'b'.repeat(64))
    const hash = (p: V1Pod) => p.metadata!.annotations![POOL_SPEC_ANNOTATION]
    expect(hash(again)).toBe(hash(pod))
    expect(hash(desiredPoolPod(htmlPdf, runnerSettings({ imageTag: 'v2' }), pool, 'n', 'dutil', token))).not.toBe(
      hash(pod),
    )
    expect(hash(desiredPoolPod(htmlPdf, runnerSettings(), { ...pool, restartEvery: 5 }, 'n', 'dutil', token))).not.toBe(
      hash(pod),
    )
  })
})

describe('newPoolPodName', () => {
  it('never gives the same name twice, and makes a valid pod name', () => {
    const names = new Set(Array.from({ length: 200 }, () => newPoolPodName('xls-to-xlsx')))
    expect(names.size).toBe(200)
    for (const n of names) expect(n).toMatch(/^dutil-pool-xls-to-xlsx-[a-z0-9]{8}$/)
  })
})

const a = tenantHash('key:a')
const b = tenantHash('key:b')
const HASH = 'h1'
const pod = (
  name: string,
  o: { tenant?: string; ready?: boolean; extra?: Partial<V1Pod>; hash?: string } = {},
): V1Pod => ({
  metadata: {
    name,
    labels: { [LABELS.pool]: 'html-pdf', ...(o.tenant ? { [LABELS.poolTenant]: o.tenant } : {}) },
    annotations: { [POOL_SPEC_ANNOTATION]: o.hash ?? HASH },
  },
  status: {
    podIP: '10.0.0.1',
    phase: 'Running',
    conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
  },
  ...o.extra,
})
const names = (pods: Array<{ pod: V1Pod }>) => pods.map((p) => p.pod.metadata!.name)

describe('choosePoolPod', () => {
  it("takes an idle pod of the job's tenant first, then a generic one to bind, never another tenant's", () => {
    const pods = [pod('p0', { tenant: b }), pod('p1'), pod('p2', { tenant: a })]
    expect(choosePoolPod(pods, a, new Set())).toEqual({ pod: pods[2], bind: false })
    expect(choosePoolPod(pods, a, new Set(['p2']))).toEqual({ pod: pods[1], bind: true })
    expect(choosePoolPod(pods, a, new Set(['p1', 'p2']))).toBeUndefined()
    expect(choosePoolPod(pods, tenantHash('key:c'), new Set())).toEqual({ pod: pods[1], bind: true })
  })

  it('never picks a pod holding a job, not ready, or going', () => {
    const pods = [
      pod('busy'),
      pod('starting', { ready: false }),
      pod('going', {
        extra: { metadata: { name: 'going', deletionTimestamp: new Date(), labels: { [LABELS.pool]: 'html-pdf' } } },
      }),
      pod('retired', { extra: { status: { phase: 'Succeeded', podIP: '10.0.0.2' } } }),
    ]
    expect(choosePoolPod(pods, a, new Set(['busy']))).toBeUndefined()
    expect(choosePoolPod(pods, a, new Set())?.pod.metadata?.name).toBe('busy')
  })
})

describe('planPool', () => {
  const plan = (
    pods: V1Pod[],
    o: {
      busy?: string[]
      waiting?: string[]
      lastUsed?: Record<string, number>
      size?: number
      spare?: number
      now?: number
      atWork?: string[]
    } = {},
  ) =>
    planPool({
      pods,
      pool: { ...pool, size: o.size ?? 3, spare: o.spare ?? 1 },
      wantedHash: HASH,
      busy: new Set(o.busy ?? []),
      waiting: o.waiting ?? [],
      lastUsed: new Map(Object.entries(o.lastUsed ?? {})),
      now: o.now ?? 60_000,
      atWork: new Set(o.atWork ?? []),
    })

  it('keeps `spare` generic pods started ahead, within the size', () => {
    expect(plan([])).toEqual({ remove: [], create: 1 })
    expect(plan([pod('g')])).toEqual({ remove: [], create: 0 })
    expect(plan([pod('p0', { tenant: a }), pod('p1', { tenant: b })])).toEqual({ remove: [], create: 1 })
    expect(plan([pod('p0', { tenant: a }), pod('p1', { tenant: b }), pod('p2', { tenant: a })])).toEqual({
      remove: [],
      create: 0,
    })
  })

  it('makes a pod for every job waiting beyond the generic ones, and room by the least recently used idle pod of a tenant not waiting', () => {
    expect(plan([pod('g')], { waiting: [a, a] })).toEqual({ remove: [], create: 2 })
    const full = [pod('p0', { tenant: b }), pod('p1', { tenant: b }), pod('p2', { tenant: a })]
    const p = plan(full, { waiting: [tenantHash('key:c')], lastUsed: { p0: 5, p1: 2, p2: 1 } })
    // p2 is the least recently used idle pod of a tenant that is not waiting: it goes.
    expect(p.create).toBe(0)
    expect(p.remove.map((r) => [r.pod.metadata!.name, r.why])).toEqual([['p2', 'another tenant needs the slot']])
    // A waiting tenant's own pods stay; pods holding a job stay.
    const c = tenantHash('key:c')
    const q = plan(full, { waiting: [c], busy: ['p2'], lastUsed: { p0: 5, p1: 2, p2: 1 } })
    expect(names(q.remove)).toEqual(['p1'])
    // A tenant whose pods are all busy waits for one of them: no other tenant's pod goes for it.
    expect(plan(full, { waiting: [a, a], busy: ['p2'], lastUsed: { p0: 5, p1: 2 } }).remove).toEqual([])
  })

  it(`takes no pod its tenant used within ${POOL_TAKE_IDLE_MS} ms`, () => {
    const full = [pod('p0', { tenant: b }), pod('p1', { tenant: b }), pod('p2', { tenant: a })]
    const c = tenantHash('key:c')
    const now = 100_000
    const recent = { p0: now - 1_000, p1: now - 2_000, p2: now - POOL_TAKE_IDLE_MS + 1 }
    expect(plan(full, { waiting: [c], lastUsed: recent, now })).toEqual({ remove: [], create: 0 })
    const p = plan(full, { waiting: [c], lastUsed: { ...recent, p1: now - POOL_TAKE_IDLE_MS }, now })
    expect(names(p.remove)).toEqual(['p1'])
    // Nor a pod whose tenant has a job queued for a slot, however long the pod has been idle.
    expect(plan(full, { waiting: [c], atWork: [b], now }).remove.map((r) => r.pod.metadata!.name)).toEqual(['p2'])
    expect(plan(full, { waiting: [c], atWork: [a, b], now }).remove).toEqual([])
  })

  it('makes room for a podless tenant when the generic pod waiting for it has no node to run on', () => {
    const c = tenantHash('key:c')
    const noRoom = pod('g', {
      ready: false,
      extra: {
        status: {
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
        },
      },
    })
    const full = [pod('p0', { tenant: a }), pod('p1', { tenant: a }), noRoom]
    // The generic pod would serve c if it ran; it cannot, so a's least recently used idle pod goes
    // (its room lets the generic pod start), and no pod more is made.
    expect(plan(full, { waiting: [c], lastUsed: { p0: 5, p1: 2 } })).toEqual({
      remove: [{ pod: full[1], why: 'another tenant needs the slot' }],
      create: 0,
    })
    // A generic pod merely starting (scheduled, not ready yet) is c's: nothing goes.
    const starting = pod('g', { ready: false })
    expect(plan([full[0], full[1], starting], { waiting: [c], lastUsed: { p0: 5, p1: 2 } })).toEqual({
      remove: [],
      create: 0,
    })
  })

  it('deletes ended pods, and idle pods made from other settings or beyond the size', () => {
    const ended = pod('e', { extra: { status: { phase: 'Succeeded' } } })
    const old = pod('o', { hash: 'h0' })
    const oldBusy = pod('ob', { hash: 'h0', tenant: a })
    const p = plan([ended, old, oldBusy], { busy: ['ob'] })
    expect(p.remove.map((r) => [r.pod.metadata!.name, r.why])).toEqual([
      ['e', 'the pod retired'],
      ['o', 'made from other settings'],
    ])
    const shrunk = plan([pod('p0', { tenant: a }), pod('g0'), pod('p1', { tenant: b })], {
      size: 1,
      spare: 0,
      lastUsed: { p0: 2, p1: 1 },
    })
    expect(names(shrunk.remove)).toEqual(['g0', 'p1'])
  })
})

describe('poolRoom', () => {
  const now = 100_000
  const room = (
    pods: V1Pod[],
    tenant: string,
    o: { busy?: string[]; lastUsed?: Record<string, number>; atWork?: string[] } = {},
  ) =>
    poolRoom({
      pods,
      pool: { ...pool, size: 3, spare: 1 },
      busy: new Set(o.busy ?? []),
      lastUsed: new Map(Object.entries(o.lastUsed ?? {})),
      now,
      atWork: new Set(o.atWork ?? []),
      tenant,
    })
  const c = tenantHash('key:c')
  const full = [pod('p0', { tenant: a }), pod('p1', { tenant: a }), pod('p2', { tenant: b })]
  const recent = { p0: now - 100, p1: now - 200, p2: now - 300 }

  it('waits for a pod of the pool while the tenant has one, a generic one stands or starts, or there is room', () => {
    expect(room(full, a, { busy: ['p0', 'p1', 'p2'], lastUsed: recent })).toBe('wait')
    expect(room([pod('p0', { tenant: a }), pod('g', { ready: false })], c, { lastUsed: recent })).toBe('wait')
    expect(room([pod('p0', { tenant: a }), pod('p1', { tenant: b })], c, { lastUsed: recent })).toBe('wait')
  })

  it("runs a newcomer's job as a batch Job when every pod of a full pool is another tenant's and used lately", () => {
    expect(room(full, c, { lastUsed: recent })).toBe('job')
    expect(room(full, c, { busy: ['p0', 'p1', 'p2'] })).toBe('job')
    // A pod idle for long enough is taken instead (planPool deletes it and makes one for the newcomer).
    expect(room(full, c, { lastUsed: { ...recent, p2: now - POOL_TAKE_IDLE_MS } })).toBe('wait')
    // Every tenant with a pod has a job queued or running: its pods stay, however idle.
    expect(room(full, c, { atWork: [a, b] })).toBe('job')
    expect(room(full, c, { atWork: [a] })).toBe('wait')
    // An ended pod is no pod: there is room.
    const ended = pod('p2', { tenant: b, extra: { status: { phase: 'Succeeded' } } })
    expect(room([full[0], full[1], ended], c, { lastUsed: recent })).toBe('wait')
  })
})
