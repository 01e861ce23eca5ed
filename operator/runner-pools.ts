import { randomBytes } from 'node:crypto'
import type { CoreV1Api, ObjectCache, V1Pod } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import { LABELS } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { isTerminal } from '../contract/job-view.js'
import { catalog } from '../runners/catalog.js'
import { apiStatus } from '../platform/kube.js'
import type { RunnerPool } from './config.js'
import type { RunnerSettings } from './desired-job.js'
import type { PoolClient } from './pool-client.js'
import {
  choosePoolPod,
  desiredPoolPod,
  isPoolPod,
  poolPodEnded,
  poolPodName,
  POOL_SPEC_ANNOTATION,
  wantedSpecHash,
} from './pool-pod.js'

export interface RunnerPoolsDeps {
  namespace: string
  pods: ObjectCache<V1Pod>
  utilityJobs: ObjectCache<UtilityJobResource>
  core: Pick<CoreV1Api, 'createNamespacedPod' | 'deleteNamespacedPod'>
  runner: RunnerSettings
  client: PoolClient
  /** Queues jobs for another pass (a pod came free for them). */
  wake: (names: string[]) => void
  /** Throws when this replica may no longer act (before every write). */
  fence?: () => void
  log: Logger
}

/**
 * How long a job whose key has a warm browser only in a busy pod waits for that pod before an
 * idle pod starts a browser afresh for it: about two small jobs. A start costs the node more CPU
 * than the wait, and on a busy node CPU is what bounds the pool.
 */
export const WARM_WAIT_MS = 400

/**
 * The runner pools (docs/adr/0026-runner-pools.md): keeps each pooled utility's `size` pods
 * (made, replaced when ended or made from other settings), and hands jobs to them. Which pod
 * holds which job is each unfinished job's `status.runnerPod`, in the cluster: a job gives its
 * pod back by finishing, with no write to the pod. `handing` only bridges the moment between
 * handing a job over and the watch showing its status.
 */
export class RunnerPools {
  /** Jobs being handed to a pod, or handed and not yet shown so by the watch: job → pod. */
  private readonly handing = new Map<string, string>()
  /** Jobs this process finished whose watched copy may not show it yet: their pods are free. */
  private readonly finished = new Set<string>()
  /** The tenants each pod's browsers served lately, most recent last (a hint: the runner itself enforces the rule). */
  private readonly warm = new Map<string, { tenants: string[]; lastUsed: number }>()
  private handed = 0
  /** When each job waiting for a pod first asked for one (performance.now()). */
  private readonly since = new Map<string, number>()
  /** Jobs that found no idle pod, by utility: woken when a pod of theirs comes free. */
  private readonly waiting = new Map<string, Set<string>>()
  private active = false
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly d: RunnerPoolsDeps) {}

  get client(): PoolClient {
    return this.d.client
  }

  poolOf(slug: string): RunnerPool | undefined {
    return this.d.runner.pools?.[slug]
  }

  private poolPods(slug?: string): V1Pod[] {
    return this.d.pods.list(this.d.namespace).filter((p) => isPoolPod(p, slug))
  }

  /** Pod name → the unfinished job it holds: from the jobs' status, and the hand-overs in flight. */
  private holders(): Map<string, string> {
    const out = new Map<string, string>()
    for (const uj of this.d.utilityJobs.list(this.d.namespace)) {
      const pod = uj.status?.runnerPod
      const name = uj.metadata.name
      if (!pod) continue
      if (this.handing.get(name) === pod) this.handing.delete(name) // the watch shows it now
      if (isTerminal(uj) || uj.metadata.deletionTimestamp) this.finished.delete(name)
      else if (!this.finished.has(name)) out.set(pod, name)
    }
    for (const job of this.finished) if (!this.d.utilityJobs.get(job, this.d.namespace)) this.finished.delete(job)
    for (const job of this.since.keys()) {
      const uj = this.d.utilityJobs.get(job, this.d.namespace)
      if (!uj || isTerminal(uj)) this.since.delete(job)
    }
    for (const [job, pod] of this.handing) {
      const uj = this.d.utilityJobs.get(job, this.d.namespace)
      if (!uj || isTerminal(uj)) this.handing.delete(job)
      else out.set(pod, job)
    }
    return out
  }

  /** The pool pod holding job `uj` (its status, or a hand-over in flight), if it exists. */
  podOf(uj: UtilityJobResource): V1Pod | undefined {
    const name = uj.status?.runnerPod ?? this.handing.get(uj.metadata.name)
    return name ? this.d.pods.get(name, this.d.namespace) : undefined
  }

  /** Whether job `uj` holds a pool pod's run slot (handed over, unfinished). */
  holds(uj: UtilityJobResource): boolean {
    return !isTerminal(uj) && Boolean(uj.status?.runnerPod ?? this.handing.get(uj.metadata.name))
  }

  /**
   * Takes an idle ready pod of the utility for job `name` (choosePoolPod: warm for the tenant
   * first), until the job's status names it or the job goes back (`handBack`). Null when no pod
   * is idle: the job is woken when one comes free.
   */
  claim(slug: string, name: string, tenant: string): V1Pod | null {
    const busy = new Set(this.holders().keys())
    const browsers = this.poolOf(slug)?.browsers ?? 1
    const now = performance.now()
    const since = this.since.get(name) ?? now
    this.since.set(name, since)
    const preferWarm = now - since < WARM_WAIT_MS
    const pod = choosePoolPod(this.poolPods(slug), tenant, busy, this.warm, browsers, preferWarm)
    const waiting = this.waiting.get(slug) ?? new Set<string>()
    this.waiting.set(slug, waiting)
    if (!pod) {
      waiting.add(name)
      return null
    }
    waiting.delete(name)
    this.since.delete(name)
    const podName = pod.metadata!.name!
    this.handing.set(name, podName)
    // As the runner picks: the tenant's own browser, else one of its, the least recent, goes to it.
    const warm = this.warm.get(podName) ?? { tenants: [], lastUsed: 0 }
    const tenants = [...warm.tenants.filter((t) => t !== tenant), tenant].slice(-browsers)
    this.warm.set(podName, { tenants, lastUsed: ++this.handed })
    return this.d.pods.get(podName, this.d.namespace) ?? null
  }

  /** The job did not go to its pod after all: the pod is free for another. */
  handBack(name: string, pod: V1Pod): void {
    if (this.handing.get(name) === pod.metadata?.name) this.handing.delete(name)
    this.podChanged(pod)
  }

  /** Job `name` finished (or went): its pod is free, and the jobs waiting for one look again. */
  released(name: string, slug: string): void {
    this.handing.delete(name)
    const uj = this.d.utilityJobs.get(name, this.d.namespace)
    if (uj && !isTerminal(uj)) this.finished.add(name)
    this.waiting.get(slug)?.delete(name)
    this.wakeWaiting(slug)
  }

  /** A pool pod changed (came free, became ready): the jobs waiting for one of its utility look again. */
  podChanged(pod: V1Pod): void {
    this.schedule()
    const slug = pod.metadata?.labels?.[LABELS.pool]
    if (slug) this.wakeWaiting(slug)
  }

  /** The jobs waiting for a pod of the utility look again (each asks anew, in its next pass). */
  private wakeWaiting(slug: string): void {
    const waiting = this.waiting.get(slug)
    if (!waiting?.size) return
    const names = [...waiting]
    waiting.clear()
    this.d.wake(names)
  }

  /** Deletes a pool pod (a job past its deadline, a pod that does not answer); the pool makes a new one. */
  async remove(pod: V1Pod, why: string): Promise<void> {
    this.d.fence?.()
    try {
      await this.d.core.deleteNamespacedPod({
        name: pod.metadata!.name!,
        namespace: this.d.namespace,
        gracePeriodSeconds: 0,
      })
      this.d.log.warn({ pod: pod.metadata!.name, why }, 'pool pod deleted')
    } catch (err) {
      if (apiStatus(err) !== 404) throw err
    }
  }

  /** Leader only: pool upkeep runs from now until `signal` aborts. */
  lead(signal: AbortSignal): void {
    this.active = true
    signal.addEventListener('abort', () => (this.active = false), { once: true })
  }

  /** Asks for an upkeep pass soon (many asks, one pass). */
  schedule(): void {
    if (!this.active || this.timer) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.sync().catch((err) => this.d.log.warn({ err: (err as Error).message }, 'runner pool upkeep failed'))
    }, 100)
    this.timer.unref?.()
  }

  /**
   * Upkeep, level-triggered: each pooled utility has pods 0…size-1; an ended pod is deleted
   * (and made again on a later pass, once its name is free), and so is an idle pod made from
   * other settings (a new image tag, resources, placement) or beyond the size.
   */
  async sync(): Promise<void> {
    if (!this.active) return
    const pools = this.d.runner.pools ?? {}
    const busy = this.holders()
    for (const pod of this.poolPods()) {
      const slug = pod.metadata!.labels![LABELS.pool]
      const pool = pools[slug]
      const utility = catalog.get(slug)
      const idle = !busy.has(pod.metadata!.name!)
      if (pod.metadata?.deletionTimestamp) continue
      const index = Number(/-(\d+)$/.exec(pod.metadata!.name!)?.[1] ?? '-1')
      let why: string | undefined
      if (poolPodEnded(pod)) why = `the pod ${pod.status?.phase === 'Succeeded' ? 'exited' : 'failed'}`
      else if (idle && (!pool || !utility || index >= pool.size)) why = 'beyond the pool size'
      else if (
        idle &&
        pool &&
        utility &&
        pod.metadata?.annotations?.[POOL_SPEC_ANNOTATION] !==
          wantedSpecHash(desiredPoolPod(utility, this.d.runner, pool, index, this.d.namespace, ''))
      )
        why = 'made from other settings'
      // An idle pod may have been handed a job since this pass began: it stays.
      if (why && (poolPodEnded(pod) || !this.holders().has(pod.metadata!.name!))) await this.remove(pod, why)
    }
    for (const [slug, pool] of Object.entries(pools)) {
      const utility = catalog.get(slug)
      if (!utility) continue
      for (let i = 0; i < pool.size; i++) {
        const name = poolPodName(slug, i)
        if (this.d.pods.get(name, this.d.namespace)) continue
        const body = desiredPoolPod(utility, this.d.runner, pool, i, this.d.namespace, randomBytes(32).toString('hex'))
        this.d.fence?.()
        try {
          await this.d.core.createNamespacedPod({ namespace: this.d.namespace, body })
          this.d.log.info({ pod: name, utility: slug }, 'pool pod created')
        } catch (err) {
          if (apiStatus(err) !== 409) throw err // AlreadyExists: still terminating, or made a moment ago
        }
      }
    }
  }
}
