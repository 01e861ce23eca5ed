import { randomBytes } from 'node:crypto'
import { PatchStrategy, setHeaderOptions, type CoreV1Api, type ObjectCache, type V1Pod } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import { LABELS } from '../contract/api-group.js'
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
  core: Pick<CoreV1Api, 'createNamespacedPod' | 'deleteNamespacedPod' | 'patchNamespacedPod'>
  runner: RunnerSettings
  client: PoolClient
  /** Throws when this replica may no longer act (before every write). */
  fence?: () => void
  log: Logger
}

/** A JSON Pointer segment (RFC 6901) for a label key. */
const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * The runner pools (docs/adr/0026-runner-pools.md): keeps each pooled utility's `size` pods
 * (made, replaced when ended or made from other settings), and hands jobs to them. Which pod
 * holds which job is the pod's job label, in the cluster; `claimed` only bridges the moment
 * between labelling a pod and the watch showing it.
 */
export class RunnerPools {
  /** Jobs labelled onto a pod by this process, with the pod as the label patch returned it. */
  private readonly claimed = new Map<string, V1Pod>()
  /** Pods being handed a job right now (by name). */
  private readonly claiming = new Set<string>()
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

  /** The pool pod holding job `name`: its label as the watch shows it, or as this process just set it. */
  podOf(name: string): V1Pod | undefined {
    const labelled = this.poolPods().find((p) => p.metadata?.labels?.[LABELS.jobId] === name)
    if (labelled) return labelled
    const claimed = this.claimed.get(name)
    if (!claimed) return undefined
    const now = this.d.pods.get(claimed.metadata!.name!, this.d.namespace)
    // The watch lags the label patch: the pod as the patch returned it, while the pod lives.
    if (now && now.metadata?.uid === claimed.metadata?.uid && !poolPodEnded(now))
      return { ...claimed, status: now.status }
    this.claimed.delete(name)
    return undefined
  }

  /** Whether job `name` holds a pool pod (a run slot). */
  holds(name: string): boolean {
    return this.podOf(name) !== undefined
  }

  /**
   * Labels an idle pod of the utility with job `name` and the tenant (pure choice by
   * choosePoolPod; the label patch carries the pod's resourceVersion, so two passes never take
   * one pod). Null when no pod is idle or another pass took it first.
   */
  async claim(slug: string, name: string, tenant: string): Promise<V1Pod | null> {
    const pod = choosePoolPod(this.poolPods(slug), tenant, this.claiming)
    if (!pod) return null
    const podName = pod.metadata!.name!
    this.claiming.add(podName)
    try {
      this.d.fence?.()
      const patched = await this.d.core.patchNamespacedPod(
        {
          name: podName,
          namespace: this.d.namespace,
          body: {
            metadata: {
              resourceVersion: pod.metadata!.resourceVersion,
              labels: { [LABELS.jobId]: name, [LABELS.poolTenant]: tenant },
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
      this.claimed.set(name, patched)
      return patched
    } catch (err) {
      const code = apiStatus(err)
      if (code === 409 || code === 404) return null
      throw err
    } finally {
      this.claiming.delete(podName)
    }
  }

  /** The pod holding job `name` takes the next job: its job label goes (only if it is still this job's). */
  async release(name: string, pod: V1Pod): Promise<void> {
    this.claimed.delete(name)
    this.d.fence?.()
    try {
      await this.d.core.patchNamespacedPod(
        {
          name: pod.metadata!.name!,
          namespace: this.d.namespace,
          body: [
            { op: 'test', path: `/metadata/labels/${pointer(LABELS.jobId)}`, value: name },
            { op: 'remove', path: `/metadata/labels/${pointer(LABELS.jobId)}` },
          ],
        },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      )
    } catch (err) {
      const code = apiStatus(err)
      // Gone, or holding another job already (the test failed): nothing to release.
      if (code === 404 || code === 409 || code === 422) return
      throw err
    }
    this.schedule()
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
    for (const pod of this.poolPods()) {
      const slug = pod.metadata!.labels![LABELS.pool]
      const pool = pools[slug]
      const utility = catalog.get(slug)
      const idle = !pod.metadata?.labels?.[LABELS.jobId] && !this.claiming.has(pod.metadata!.name!)
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
      if (why) await this.remove(pod, why)
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
