import { PatchStrategy, setHeaderOptions, type CustomObjectsApi, type ObjectCache } from '@kubernetes/client-node'
import { API_GROUP, API_VERSION, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { isTerminal } from '../contract/job-view.js'
import { apiStatus } from '../contract/kube.js'

type Waiter = (job: UtilityJobResource) => void
export type JobPredicate = (job: UtilityJobResource) => boolean

/**
 * UtilityJobs as the gateway sees them: a watched cache (with a direct read when the watch
 * has not delivered a fresh object yet) and waiters woken by watch events, so long-polls and
 * sync runs answer the moment a job finishes instead of polling.
 */
export class JobStore {
  private readonly waiters = new Map<string, Set<Waiter>>()

  constructor(
    private readonly cache: ObjectCache<UtilityJobResource>,
    private readonly custom: CustomObjectsApi,
    readonly namespace: string,
  ) {}

  private coords() {
    return { group: API_GROUP, version: API_VERSION, namespace: this.namespace, plural: UTILITY_JOB.plural }
  }

  /** Call on every watch event. */
  observe(job: UtilityJobResource): void {
    const set = this.waiters.get(job.metadata.name)
    if (set) for (const w of [...set]) w(job)
  }

  /** The UtilityJob as the watch last delivered it; undefined when the cache has none. */
  cached(name: string): UtilityJobResource | undefined {
    return this.cache.get(name, this.namespace)
  }

  async get(name: string): Promise<UtilityJobResource | undefined> {
    const cached = this.cache.get(name, this.namespace)
    if (cached) return cached
    try {
      return (await this.custom.getNamespacedCustomObject({ ...this.coords(), name })) as UtilityJobResource
    } catch (err) {
      if (apiStatus(err) === 404) return undefined
      throw err
    }
  }

  async create(job: UtilityJobResource): Promise<UtilityJobResource> {
    return (await this.custom.createNamespacedCustomObject({ ...this.coords(), body: job })) as UtilityJobResource
  }

  /** The job once terminal, or as it is when `timeoutMs` runs out (or the signal aborts). */
  waitForTerminal(job: UtilityJobResource, timeoutMs: number, signal?: AbortSignal): Promise<UtilityJobResource> {
    return this.waitUntil(job, isTerminal, timeoutMs, signal)
  }

  /** The job once `done(job)` holds (seen through the watch), or as it is at the timeout. */
  async waitUntil(job: UtilityJobResource, done: JobPredicate, timeoutMs: number, signal?: AbortSignal): Promise<UtilityJobResource> {
    const name = job.metadata.name
    const latest = () => newer(this.cache.get(name, this.namespace) ?? job, job)
    if (done(latest()) || timeoutMs <= 0 || signal?.aborted) return latest()
    return new Promise((resolve) => {
      let set = this.waiters.get(name)
      if (!set) this.waiters.set(name, (set = new Set()))
      const finish = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', finish)
        set!.delete(waiter)
        if (set!.size === 0) this.waiters.delete(name)
        resolve(latest())
      }
      const waiter: Waiter = (j) => {
        if (done(newer(j, job))) finish()
      }
      const timer = setTimeout(finish, timeoutMs)
      signal?.addEventListener('abort', finish)
      set.add(waiter)
      // The job may have changed between the first look and registering the waiter.
      if (done(latest())) finish()
    })
  }

  async patchSpec(name: string, spec: Record<string, unknown>): Promise<UtilityJobResource> {
    return (await this.custom.patchNamespacedCustomObject(
      { ...this.coords(), name, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as UtilityJobResource
  }


}

function newer(a: UtilityJobResource, b: UtilityJobResource): UtilityJobResource {
  const ra = Number(a.metadata.resourceVersion ?? 0)
  const rb = Number(b.metadata.resourceVersion ?? 0)
  return rb > ra ? b : a
}
