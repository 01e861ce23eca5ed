import { randomBytes } from 'node:crypto'
import { type CoreV1Api, type ObjectCache, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import { LABELS } from '../contract/api-group.js'
import { POOL, type PoolJobState } from '../contract/runner-protocol.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { isTerminal } from '../contract/job-view.js'
import { catalog } from '../runners/catalog.js'
import { apiStatus } from '../platform/kube.js'
import type { RunnerPool } from './config.js'
import type { RunnerSettings } from './desired-job.js'
import type { PoolJobView } from './unfinished-jobs.js'
import type { PoolClient } from './pool-client.js'
import {
  choosePoolPod,
  desiredPoolPod,
  isPoolPod,
  newPoolPodName,
  planPool,
  poolRoom,
  podTenant,
  poolPodEnded,
  wantedSpecHash,
} from './pool-pod.js'

/**
 * The merge patch that binds a generic pool pod to a tenant, only if the pod is still the version
 * this process saw: its resourceVersion is a precondition, so a pod another leader bound (and
 * handed a job) meanwhile is refused with 409.
 */
export function tenantBinding(pod: V1Pod, tenant: string): V1Pod {
  return { metadata: { resourceVersion: pod.metadata?.resourceVersion, labels: { [LABELS.poolTenant]: tenant } } }
}

export interface RunnerPoolsDeps {
  namespace: string
  pods: ObjectCache<V1Pod>
  utilityJobs: ObjectCache<UtilityJobResource>
  /** The unfinished jobs' pods and tenants, kept from the watch (no pass walks every job). */
  jobs: PoolJobView
  core: Pick<CoreV1Api, 'createNamespacedPod' | 'deleteNamespacedPod' | 'patchNamespacedPod'>
  runner: RunnerSettings
  client: PoolClient
  /** Queues jobs for another pass (a pod came free for them). */
  wake: (names: string[]) => void
  /** Throws when this replica may no longer act (before every write). */
  fence?: () => void
  log: Logger
}

/**
 * The runner pools (docs/adr/0026-runner-pools.md): keeps each pooled utility's pods (planPool),
 * and hands jobs to them, a pod only ever to its tenant's jobs. Which pod holds which job is each
 * unfinished job's `status.runnerPod`, and which tenant a pod serves is its label, both in the
 * cluster: a job gives its pod back by finishing, with no write to the pod. `handing` only bridges
 * the moment between handing a job over and the watch showing its status.
 */
/** How long a pod this process made may stay out of the watch before it counts as never made. */
const CREATING_MS = 30_000
/** Jobs accepted up to this long after this process began to lead may have been handed over by the one before. */
const ADOPT_MARGIN_MS = 60_000

export class RunnerPools {
  /** Jobs being handed to a pod, or handed and not yet shown so by the watch: job → pod. */
  private readonly handing = new Map<string, string>()
  /** Jobs this process finished whose watched copy may not show it yet: their pods are free. */
  private readonly finished = new Set<string>()
  /** When each pod last took or gave back a job (performance.now()): the least recently used goes first when a tenant needs room. */
  private readonly lastUsed = new Map<string, number>()
  /** Jobs that found no pod, by utility: job → its tenant; woken when a pod of theirs comes free. */
  private readonly waiting = new Map<string, Map<string, string>>()
  /** Pods this process bound to a tenant whose watched copy may not show the label yet: pod → tenant. */
  private readonly bound = new Map<string, string>()
  /** Pods this process made that the watch does not show yet: counted, so no pass makes them twice. */
  private readonly creating = new Map<string, { pod: V1Pod; at: number }>()
  /** Jobs whose pod was asked to answer when they end (one long poll each): job → pod. */
  private readonly watching = new Map<string, string>()
  /** The final states long polls brought, until the job's pass writes them: job → state. */
  private readonly ended = new Map<string, PoolJobState>()
  /**
   * Jobs a pod took, with when (epoch ms), until they finish: a pooled job's status says nothing
   * of its pod until it has run a while (docs/adr/0035), so this is where its hand-over is kept.
   */
  private readonly taken = new Map<string, number>()
  /** Jobs another leader may have handed over whose pods were asked (`adopt`): each once. */
  private readonly asked = new Set<string>()
  /** When this process began to lead (epoch ms): jobs accepted before then may be another leader's hand-overs. */
  private leadingSince: number | null = null
  private active = false
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly d: RunnerPoolsDeps) {}

  get client(): PoolClient {
    return this.d.client
  }

  poolOf(slug: string): RunnerPool | undefined {
    return this.d.runner.pools?.[slug]
  }

  /** The pool pods as the watch shows them, with the tenant labels this process wrote since. */
  private poolPods(slug?: string): V1Pod[] {
    return this.d.pods
      .list(this.d.namespace)
      .filter((p) => isPoolPod(p, slug))
      .map((p) => {
        const tenant = this.bound.get(p.metadata!.name!)
        if (!tenant) return p
        if (podTenant(p) !== null) {
          this.bound.delete(p.metadata!.name!) // the watch shows it now
          return p
        }
        return { ...p, metadata: { ...p.metadata, labels: { ...p.metadata!.labels, [LABELS.poolTenant]: tenant } } }
      })
  }

  /** The utility's pods as the watch shows them, and the ones made since that it does not show yet. */
  private podsWithCreating(slug: string): V1Pod[] {
    const now = performance.now()
    for (const [name, c] of this.creating)
      if (this.d.pods.get(name, this.d.namespace) || now - c.at > CREATING_MS) this.creating.delete(name)
    return [...this.poolPods(slug), ...[...this.creating.values()].map((c) => c.pod).filter((p) => isPoolPod(p, slug))]
  }

  private waitingOf(slug: string): Map<string, string> {
    let w = this.waiting.get(slug)
    if (!w) this.waiting.set(slug, (w = new Map()))
    return w
  }

  /** Pod name → the unfinished job it holds: from the jobs' status, and the hand-overs in flight. */
  private holders(): Map<string, string> {
    const out = new Map<string, string>()
    const job = (name: string) => this.d.utilityJobs.get(name, this.d.namespace)
    const gone = (name: string) => {
      const uj = job(name)
      return !uj || isTerminal(uj) || Boolean(uj.metadata.deletionTimestamp)
    }
    for (const name of this.finished) if (gone(name)) this.finished.delete(name)
    for (const [name, pod] of this.d.jobs.runnerPods()) if (!this.finished.has(name)) out.set(pod, name)
    for (const w of this.waiting.values()) for (const name of w.keys()) if (gone(name)) w.delete(name)
    for (const [name, pod] of this.handing) {
      // Gone, or the watch shows the hand-over now.
      if (gone(name) || job(name)?.status?.runnerPod === pod) this.handing.delete(name)
      if (!gone(name)) out.set(pod, name)
    }
    for (const pod of this.lastUsed.keys()) if (!this.d.pods.get(pod, this.d.namespace)) this.lastUsed.delete(pod)
    for (const pod of this.bound.keys()) if (!this.d.pods.get(pod, this.d.namespace)) this.bound.delete(pod)
    return out
  }

  /** The name of the pool pod holding job `uj` (its status, or a hand-over of this process), whether it exists or not. */
  podNameOf(uj: UtilityJobResource): string | undefined {
    return uj.status?.runnerPod ?? this.handing.get(uj.metadata.name)
  }

  /** The pool pod holding job `uj` (its status, or a hand-over in flight), if it exists. */
  podOf(uj: UtilityJobResource): V1Pod | undefined {
    const name = this.podNameOf(uj)
    return name ? this.d.pods.get(name, this.d.namespace) : undefined
  }

  /** Job `name` was taken by the pod it claimed, at `at` (epoch ms). */
  tookOver(name: string, at: number): void {
    this.taken.set(name, at)
  }

  /** When job `name`'s pod took it, if this process handed it over (or adopted it) and it has not finished. */
  takenAt(name: string): number | undefined {
    return this.taken.get(name)
  }

  /**
   * A job whose status names no pod, accepted before this process led, may run on a pod another
   * leader handed it to without a status write: its tenant's pods of its utility are asked (once
   * per job), and one that has it holds it from now. The pod is the truth of what it runs.
   */
  async adopt(uj: UtilityJobResource, tenant: string, now: number): Promise<V1Pod | undefined> {
    const name = uj.metadata.name
    if (this.asked.has(name) || this.handing.has(name) || uj.status?.runnerPod) return undefined
    const created = Date.parse(uj.spec.createdAt)
    // Clocks of the gateway and the operator differ a little: a minute's margin.
    if (this.leadingSince !== null && created > this.leadingSince + ADOPT_MARGIN_MS) return undefined
    this.asked.add(name)
    for (const pod of this.poolPods(uj.spec.utility)) {
      if (podTenant(pod) !== tenant || poolPodEnded(pod)) continue
      const answer = await this.d.client.state(pod, uj.spec.jobId)
      if (typeof answer !== 'object') continue
      this.handing.set(name, pod.metadata!.name!)
      this.taken.set(name, now)
      this.d.log.info({ pod: pod.metadata!.name, jobId: uj.spec.jobId }, 'pooled job found on its pod')
      return pod
    }
    return undefined
  }

  /** Whether job `uj` holds a pool pod's run slot (handed over, unfinished). */
  holds(uj: UtilityJobResource): boolean {
    return !isTerminal(uj) && Boolean(uj.status?.runnerPod ?? this.handing.get(uj.metadata.name))
  }

  /**
   * Takes an idle ready pod of the utility for job `name`: one bound to its tenant, else a
   * generic one, which is labelled with the tenant first (for the rest of its life). Held until
   * the job's status names it or the job goes back (`handBack`). Null when there is none: the
   * upkeep makes one (or makes room), and the job is woken when a pod comes free.
   */
  async claim(slug: string, name: string, tenant: string): Promise<V1Pod | null> {
    const busy = new Set(this.holders().keys())
    const choice = choosePoolPod(this.poolPods(slug), tenant, busy)
    const waiting = this.waitingOf(slug)
    if (!choice) {
      waiting.set(name, tenant)
      this.schedule()
      return null
    }
    waiting.delete(name)
    const podName = choice.pod.metadata!.name!
    this.handing.set(name, podName)
    this.lastUsed.set(podName, performance.now())
    if (choice.bind) {
      let patched: V1Pod
      try {
        this.d.fence?.()
        patched = await this.d.core.patchNamespacedPod(
          { name: podName, namespace: this.d.namespace, body: tenantBinding(choice.pod, tenant) },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        )
      } catch (err) {
        this.handing.delete(name)
        const status = apiStatus(err)
        if (status === 404) return null // gone meanwhile
        if (status === 409) {
          this.d.log.warn({ pod: podName, utility: slug }, 'pool pod changed before its binding: not taken')
          return null // the watch brings it as it is now; the job looks again
        }
        throw err
      }
      // Credentials go only to a pod whose binding to this tenant the API server confirmed.
      if (patched.metadata?.labels?.[LABELS.poolTenant] !== tenant) {
        this.handing.delete(name)
        this.d.log.warn({ pod: podName, utility: slug }, 'pool pod bound to another tenant: not taken')
        return null
      }
      this.bound.set(podName, tenant)
      this.d.log.info({ pod: podName, utility: slug }, 'pool pod bound to a tenant')
      this.schedule() // one generic pod fewer: the spare is made up
      return patched
    }
    return this.d.pods.get(podName, this.d.namespace) ?? choice.pod
  }

  /**
   * Where a job of `tenant` that found no idle pod of the utility runs (poolRoom): `wait` for one
   * of the pool's pods, or `job`, a batch Job of its own, since the pool is full of pods other
   * tenants are using. A job going to a batch Job waits for no pod from now on.
   */
  room(slug: string, name: string, tenant: string): 'wait' | 'job' {
    const pool = this.poolOf(slug)
    if (!pool) return 'job'
    const where = poolRoom({
      pods: this.podsWithCreating(slug),
      pool,
      busy: new Set(this.holders().keys()),
      lastUsed: this.lastUsed,
      now: performance.now(),
      atWork: this.d.jobs.tenantsAtWork(slug),
      tenant,
    })
    if (where === 'job') this.waiting.get(slug)?.delete(name)
    return where
  }

  /** The job did not go to its pod after all: the pod is free for another. */
  handBack(name: string, pod: V1Pod): void {
    if (this.handing.get(name) === pod.metadata?.name) this.handing.delete(name)
    this.podChanged(pod)
  }

  /**
   * Asks job `name`'s pod to answer when the job ends (a long poll), and queues the job for a
   * pass then: a pooled job finishes as soon as its runner is done, with one request to its pod
   * rather than one per pass. The final state is kept for that pass (`endedState`): a pod that
   * retires after its last job exits once it has told it.
   */
  watchEnd(name: string, pod: V1Pod, jobId: string): void {
    const podName = pod.metadata!.name!
    if (this.watching.get(name) === podName || this.ended.has(name)) return
    this.watching.set(name, podName)
    void this.d.client.state(pod, jobId, POOL.maxWaitMs).then((answer) => {
      if (this.watching.get(name) !== podName) return
      this.watching.delete(name)
      if (answer === 'unreachable') return // the job's own recheck asks again
      if (answer !== 'unknown' && answer.state !== 'running') this.ended.set(name, answer)
      this.d.wake([name])
    })
  }

  /** Whether job `name`'s pod `pod` is to answer when the job ends (a long poll is out). */
  watches(name: string, pod: V1Pod): boolean {
    return this.watching.get(name) === pod.metadata?.name
  }

  /** The final state of job `name` a long poll brought (`watchEnd`), if one did. */
  endedState(name: string): PoolJobState | undefined {
    return this.ended.get(name)
  }

  /** Job `name` finished (or went): its pod is free, and the jobs waiting for one look again. */
  released(name: string, slug: string): void {
    const uj = this.d.utilityJobs.get(name, this.d.namespace)
    const pod = this.handing.get(name) ?? uj?.status?.runnerPod
    if (pod && this.lastUsed.has(pod)) this.lastUsed.set(pod, performance.now())
    this.forget(name)
    if (uj && !isTerminal(uj)) this.finished.add(name)
    this.waiting.get(slug)?.delete(name)
    this.wakeWaiting(slug)
  }

  /** Whether anything is kept for job `name` (a hand-over, a long poll, a told end). */
  keeps(name: string): boolean {
    return this.handing.has(name) || this.watching.has(name) || this.ended.has(name)
  }

  /** Job `name` is gone or finished: nothing is kept for it. */
  forget(name: string): void {
    this.handing.delete(name)
    this.taken.delete(name)
    this.asked.delete(name)
    this.watching.delete(name)
    this.ended.delete(name)
  }

  /** A pool pod changed (came free, became ready, ended): upkeep looks, and the jobs waiting for one of its utility look again. */
  podChanged(pod: V1Pod): void {
    this.schedule()
    // A pod going or gone: the jobs it was to answer about look now, not at their next recheck.
    const podName = pod.metadata?.name
    if (
      podName &&
      (pod.metadata?.deletionTimestamp || poolPodEnded(pod) || !this.d.pods.get(podName, this.d.namespace))
    ) {
      const held = [...this.watching].filter(([, p]) => p === podName).map(([name]) => name)
      if (held.length) this.d.wake(held)
    }
    const slug = pod.metadata?.labels?.[LABELS.pool]
    if (slug) this.wakeWaiting(slug)
  }

  /** The jobs waiting for a pod of the utility look again (each asks anew, in its next pass). */
  private wakeWaiting(slug: string): void {
    const waiting = this.waiting.get(slug)
    if (waiting?.size) this.d.wake([...waiting.keys()])
  }

  /** Deletes a pool pod (retired, past a job's deadline, not answering, making room). */
  async remove(pod: V1Pod, why: string): Promise<void> {
    this.d.fence?.()
    try {
      await this.d.core.deleteNamespacedPod({
        name: pod.metadata!.name!,
        namespace: this.d.namespace,
        gracePeriodSeconds: 0,
      })
      this.d.log.info({ pod: pod.metadata!.name, why }, 'pool pod deleted')
    } catch (err) {
      if (apiStatus(err) !== 404) throw err
    }
  }

  /** Leader only: pool upkeep runs from now until `signal` aborts. */
  lead(signal: AbortSignal): void {
    this.active = true
    this.leadingSince = Date.now()
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

  /** Upkeep, level-triggered: each utility's pods as planPool says (pods of utilities no longer pooled go when idle). */
  async sync(): Promise<void> {
    if (!this.active) return
    const pools = this.d.runner.pools ?? {}
    const busy = new Set(this.holders().keys())
    for (const pod of this.poolPods()) {
      const slug = pod.metadata!.labels![LABELS.pool]
      if (!pools[slug] || !catalog.get(slug))
        if (!pod.metadata?.deletionTimestamp && !busy.has(pod.metadata!.name!)) await this.remove(pod, 'not pooled')
    }
    for (const [slug, pool] of Object.entries(pools)) {
      const utility = catalog.get(slug)
      if (!utility) continue
      const wanted = wantedSpecHash(desiredPoolPod(utility, this.d.runner, pool, 'x', this.d.namespace, ''))
      const plan = planPool({
        pods: this.podsWithCreating(slug),
        pool,
        wantedHash: wanted,
        busy,
        waiting: [...this.waitingOf(slug).values()],
        lastUsed: this.lastUsed,
        now: performance.now(),
        atWork: this.d.jobs.tenantsAtWork(slug),
      })
      for (const { pod, why } of plan.remove) {
        // A pod may have been handed a job since this pass began: it stays.
        if (!poolPodEnded(pod) && this.holders().has(pod.metadata!.name!)) continue
        await this.remove(pod, why)
      }
      for (let i = 0; i < plan.create; i++) {
        const name = newPoolPodName(slug)
        const body = desiredPoolPod(
          utility,
          this.d.runner,
          pool,
          name,
          this.d.namespace,
          randomBytes(32).toString('hex'),
        )
        this.d.fence?.()
        this.creating.set(name, { pod: body, at: performance.now() })
        try {
          await this.d.core.createNamespacedPod({ namespace: this.d.namespace, body })
        } catch (err) {
          this.creating.delete(name)
          throw err
        }
        this.d.log.info({ pod: name, utility: slug }, 'pool pod created')
      }
    }
  }
}
