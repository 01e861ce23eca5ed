import { createHash, randomBytes } from 'node:crypto'
import type { V1Pod } from '@kubernetes/client-node'
import { LABELS, MANAGED_BY } from '../contract/api-group.js'
import { POOL } from '../contract/runner-protocol.js'
import { poolEntryOf, type UtilityDefinition } from '../contract/utility.js'
import type { RunnerPool } from './config.js'
import { RUNNER_CONTAINER, runnerBaseEnv, runnerCommand, runnerPodSpec, type RunnerSettings } from './desired-job.js'

/**
 * Pool mode's pods (docs/adr/0026-runner-pools.md): up to `size` runner pods per pooled utility,
 * each taking one job at a time. A pod is generic until its first job; the operator then labels
 * it with that job's tenant, and it serves that tenant alone until it retires. Which job a pod
 * holds is that job's `status.runnerPod`.
 */

/** Scratch space of a pool pod whose utility asks for none in job mode (each job's directory is made there). */
export const POOL_SCRATCH = '64Mi'

/** The annotation with the hash of a pool pod's spec: a pod made from other settings is replaced when idle. */
export const POOL_SPEC_ANNOTATION = 'dutil.io/pool-spec'

/** A new pool pod's name: never one used before, so a job's `status.runnerPod` names one pod's life. */
export function newPoolPodName(slug: string): string {
  const suffix = [...randomBytes(8)].map((b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('')
  return `dutil-pool-${slug}-${suffix}`
}

/** A label-safe, opaque name of a tenant (an API key, or one person's playground). */
export function tenantHash(tenant: string): string {
  return createHash('sha256').update(tenant).digest('hex').slice(0, 32)
}

/** The tenant a pool pod is bound to (its label), or null for a generic pod. */
export function podTenant(pod: V1Pod): string | null {
  return pod.metadata?.labels?.[LABELS.poolTenant] ?? null
}

/**
 * A pool pod of a utility (pure, but for `token`, which the caller makes): the runner pod of job
 * mode, long-lived, running the utility's pool program with its port and a readiness probe.
 * `token` is the bearer token the operator calls it with.
 */
export function desiredPoolPod(
  utility: UtilityDefinition,
  settings: RunnerSettings,
  pool: RunnerPool,
  name: string,
  namespace: string,
  token: string,
): V1Pod {
  const placement = settings.pods?.[utility.slug]
  const env = [
    ...runnerBaseEnv(settings),
    { name: POOL.restartEveryEnv, value: String(pool.restartEvery) },
    { name: POOL.idleSecondsEnv, value: String(pool.idleSeconds) },
    { name: POOL.tokenEnv, value: token },
  ]
  // Every pool pod has scratch space: each job's scratch directory is made there.
  const withScratch = {
    ...utility,
    runner: { ...utility.runner, scratchSizeLimit: utility.runner.scratchSizeLimit ?? POOL_SCRATCH },
  }
  const spec = runnerPodSpec(withScratch, settings, {
    command: runnerCommand(utility, poolEntryOf(utility)),
    env,
    ports: [{ name: 'pool', containerPort: POOL.port, protocol: 'TCP' }],
    readinessProbe: {
      httpGet: { path: '/healthz', port: POOL.port },
      periodSeconds: 2,
      failureThreshold: 1,
    },
  })
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: {
        ...(placement?.labels ?? {}),
        [LABELS.managedBy]: MANAGED_BY,
        [LABELS.utility]: utility.slug,
        [LABELS.pool]: utility.slug,
      },
      annotations: {
        ...(placement?.annotations ?? {}),
        [POOL_SPEC_ANNOTATION]: specHash(spec, pool),
      },
    },
    spec: { ...spec, restartPolicy: 'Never', activeDeadlineSeconds: POOL.maxLifeSeconds },
  }
}

/** The hash of what a pool pod runs, its token aside (each pod has its own). */
function specHash(spec: V1Pod['spec'], pool: RunnerPool): string {
  const container = spec!.containers[0]
  const withoutToken = {
    ...spec,
    containers: [{ ...container, env: container.env?.filter((e) => e.name !== POOL.tokenEnv) }],
  }
  return createHash('sha256')
    .update(
      JSON.stringify({ spec: withoutToken, pool: { restartEvery: pool.restartEvery, idleSeconds: pool.idleSeconds } }),
    )
    .digest('hex')
    .slice(0, 16)
}

/** The pool pod's spec hash as the settings would make it now. */
export function wantedSpecHash(desired: V1Pod): string {
  return desired.metadata!.annotations![POOL_SPEC_ANNOTATION]
}

/** The bearer token a pool pod was made with (its environment). */
export function poolToken(pod: V1Pod): string | undefined {
  return pod.spec?.containers?.find((c) => c.name === RUNNER_CONTAINER)?.env?.find((e) => e.name === POOL.tokenEnv)
    ?.value
}

export function isPoolPod(pod: V1Pod, slug?: string): boolean {
  const pool = pod.metadata?.labels?.[LABELS.pool]
  return pool !== undefined && (slug === undefined || pool === slug)
}

/** Gone or going: finished (retired), failed, or being deleted. */
export function poolPodEnded(pod: V1Pod): boolean {
  return Boolean(pod.metadata?.deletionTimestamp) || ['Succeeded', 'Failed'].includes(pod.status?.phase ?? '')
}

function ready(pod: V1Pod): boolean {
  return (
    !poolPodEnded(pod) &&
    Boolean(pod.status?.podIP) &&
    (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  )
}

const byName = (a: V1Pod, b: V1Pod) => a.metadata!.name!.localeCompare(b.metadata!.name!)

/**
 * The pod for a job of `tenant` among a utility's pool pods (pure): a ready pod holding no job
 * (`busy`) bound to the tenant, else a ready generic pod, which the job binds to its tenant
 * (`bind`). Never a pod bound to another tenant.
 */
export function choosePoolPod(
  pods: readonly V1Pod[],
  tenant: string,
  busy: ReadonlySet<string>,
): { pod: V1Pod; bind: boolean } | undefined {
  const idle = pods.filter((p) => ready(p) && !busy.has(p.metadata!.name!)).sort(byName)
  const own = idle.find((p) => podTenant(p) === tenant)
  if (own) return { pod: own, bind: false }
  const generic = idle.find((p) => podTenant(p) === null)
  return generic ? { pod: generic, bind: true } : undefined
}

/**
 * How long a tenant's idle pod is kept from a newcomer after its last job: a pod used more
 * recently than that is likely to be used again soon (its tenant is at work), and taking it would
 * only make that tenant start one next. Older idle pods are taken, least recently used first.
 */
export const POOL_TAKE_IDLE_MS = 10_000

/** What the upkeep of one utility's pool does now. */
export interface PoolPlan {
  /** Pods to delete, and why. */
  remove: Array<{ pod: V1Pod; why: string }>
  /** How many generic pods to make. */
  create: number
}

/** A utility's pods and what the operator knows of their use, for planPool and poolRoom. */
export interface PoolView {
  pods: readonly V1Pod[]
  pool: RunnerPool
  /** Pods holding a job (or being handed one). */
  busy: ReadonlySet<string>
  /** When each pod last took a job (ms, the clock of `now`); pods not in it were never used here. */
  lastUsed: ReadonlyMap<string, number>
  now: number
  /** Tenants with an unfinished job of the utility (queued or running): their pods are in use, idle or not. */
  atWork: ReadonlySet<string>
}

/**
 * A pod the scheduler found no node for (its PodScheduled condition False, Unschedulable): the
 * cluster has no room for it, so it may wait long, and it stands for no slot a tenant can use.
 */
function unschedulable(pod: V1Pod): boolean {
  return (pod.status?.conditions ?? []).some(
    (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
  )
}

/** Live pods (not ended or going) of the view. */
function livePods(pods: readonly V1Pod[]): V1Pod[] {
  return pods.filter((p) => !p.metadata?.deletionTimestamp && !poolPodEnded(p))
}

/**
 * Idle pods that a newcomer may take, least recently used first: bound to a tenant that is not
 * in `keep` and has no unfinished job of the utility (one queued for a slot comes back to its pod
 * as soon as it is admitted), holding no job, and unused for POOL_TAKE_IDLE_MS.
 */
function takeable(v: PoolView, pods: readonly V1Pod[], keep: ReadonlySet<string>): V1Pod[] {
  const used = (p: V1Pod) => v.lastUsed.get(p.metadata!.name!) ?? 0
  return pods
    .filter((p) => {
      const tenant = podTenant(p)
      return (
        tenant !== null &&
        !keep.has(tenant) &&
        !v.atWork.has(tenant) &&
        !v.busy.has(p.metadata!.name!) &&
        // A pod never used here (this process started since) counts as long idle.
        v.now - (v.lastUsed.get(p.metadata!.name!) ?? -Infinity) >= POOL_TAKE_IDLE_MS
      )
    })
    .sort((a, b) => used(a) - used(b) || byName(a, b))
}

/**
 * Where a job of `tenant` that found no idle pod is to run (pure): `wait` for a pod of the pool
 * (one of its own frees, a generic one is starting or can be made, or another tenant's long-idle
 * pod makes room), or `job`, as a batch Job of its own, when the pool is full of pods that other
 * tenants are using. Evicting one of those would cost a pod's start and end, as much as a batch
 * Job, and only make their tenant start one next: under such contention pods stay with the
 * tenants at work and the newcomers run as in job mode.
 */
export function poolRoom(v: PoolView & { tenant: string }): 'wait' | 'job' {
  const live = livePods(v.pods)
  if (live.some((p) => podTenant(p) === v.tenant || podTenant(p) === null)) return 'wait'
  if (live.length < v.pool.size) return 'wait'
  return takeable(v, live, new Set([v.tenant])).length > 0 ? 'wait' : 'job'
}

/**
 * The upkeep of one utility's pool (pure, level-triggered). Ended pods go (a retired runner
 * exits); idle pods made from other settings go. Then every job waiting for a pod should find a
 * generic one, and `spare` generic pods more stand ready, within `size` pods in all; when the
 * pool is full and a waiting tenant has no pod at all, the least recently used pods of tenants
 * that are not waiting, idle for POOL_TAKE_IDLE_MS, go to make room (never a pod holding a job).
 */
export function planPool(
  input: PoolView & {
    wantedHash: string
    /** The tenants of the jobs waiting for a pod, one entry per job. */
    waiting: readonly string[]
  },
): PoolPlan {
  const { pool, busy, waiting, lastUsed } = input
  const remove: PoolPlan['remove'] = []
  const live: V1Pod[] = []
  for (const pod of input.pods) {
    const name = pod.metadata!.name!
    if (pod.metadata?.deletionTimestamp) continue
    if (poolPodEnded(pod))
      remove.push({ pod, why: `the pod ${pod.status?.phase === 'Succeeded' ? 'retired' : 'failed'}` })
    else if (!busy.has(name) && pod.metadata?.annotations?.[POOL_SPEC_ANNOTATION] !== input.wantedHash)
      remove.push({ pod, why: 'made from other settings' })
    else live.push(pod)
  }
  const idle = (p: V1Pod) => !busy.has(p.metadata!.name!)
  const used = (p: V1Pod) => lastUsed.get(p.metadata!.name!) ?? 0
  // Beyond the size (it shrank): idle pods go, generic first, then the least recently used.
  const surplus = live.length - pool.size
  const extra = live
    .filter(idle)
    .sort((a, b) => Number(podTenant(a) !== null) - Number(podTenant(b) !== null) || used(a) - used(b))
    .slice(0, Math.max(0, surplus))
  for (const pod of extra) remove.push({ pod, why: 'beyond the pool size' })
  const kept = live.filter((p) => !extra.includes(p))
  const generic = kept.filter((p) => podTenant(p) === null && !unschedulable(p)).length
  const room = pool.size - kept.length
  const forWaiting = Math.max(0, waiting.length - generic)
  const createForWaiting = Math.min(forWaiting, room)
  const waitingTenants = new Set(waiting)
  // Room is made only for a tenant with no pod at all: one whose pods are busy gets one of them
  // back within a job's turnover, and a pod start costs more than that wait (taking another
  // tenant's idle pod would only make that tenant start one next).
  const hasPod = new Set(kept.map(podTenant).filter((t): t is string => t !== null))
  const podless = [...waitingTenants].filter((t) => !hasPod.has(t)).length
  const evictable = takeable(input, kept, waitingTenants).slice(0, Math.max(0, podless - generic - createForWaiting))
  for (const pod of evictable) remove.push({ pod, why: 'another tenant needs the slot' })
  const spareLeft = Math.max(0, generic - waiting.length)
  const createForSpare = Math.min(Math.max(0, pool.spare - spareLeft), room - createForWaiting)
  return { remove, create: createForWaiting + createForSpare }
}
