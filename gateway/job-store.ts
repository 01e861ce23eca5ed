import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node'
import { API_GROUP, API_VERSION, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { isTerminal } from '../contract/job-view.js'
import { apiStatus } from '../platform/kube.js'
import { requestRedelivery } from '../platform/callback-redelivery.js'

export type JobPredicate = (job: UtilityJobResource) => boolean
/** The job as it is now (the job record is never older than the UtilityJob's status). */
export type ReadJob = (jobId: string) => Promise<UtilityJobResource | undefined>

interface Waiter {
  jobId: string
  wake(job: UtilityJobResource): void
}

/**
 * UtilityJobs as the gateway needs them: creates, patches, a direct read, and waiters woken by
 * watch events, so long-polls and sync runs answer the moment a job finishes instead of polling.
 * Nothing is cached: memory holds the waiters, not the jobs (reads come from the job record).
 */
export class JobStore {
  private readonly waiters = new Map<string, Set<Waiter>>()

  constructor(
    private readonly custom: CustomObjectsApi,
    readonly namespace: string,
    private readonly read: ReadJob,
  ) {}

  private coords() {
    return { group: API_GROUP, version: API_VERSION, namespace: this.namespace, plural: UTILITY_JOB.plural }
  }

  /** Call on every watch event. */
  observe(job: UtilityJobResource): void {
    const set = this.waiters.get(job.metadata.name)
    if (set) for (const w of [...set]) w.wake(job)
  }

  /** Call when the watch started over (events may have been missed): every waiter looks again. */
  resync(): void {
    for (const set of this.waiters.values()) for (const w of [...set]) this.lookAgain(w)
  }

  private lookAgain(w: Waiter): void {
    this.read(w.jobId).then(
      (job) => job && w.wake(job),
      () => {},
    )
  }

  /** The UtilityJob from the API server; undefined when it does not exist. */
  async get(name: string): Promise<UtilityJobResource | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({ ...this.coords(), name })) as UtilityJobResource
    } catch (err) {
      if (apiStatus(err) === 404) return undefined
      throw err
    }
  }

  /** Asks the operator to send the job's callback again (platform/callback-redelivery.ts); returns the request's time. */
  requestRedelivery(name: string): Promise<string> {
    return requestRedelivery(this.custom, this.namespace, name)
  }

  async create(job: UtilityJobResource): Promise<UtilityJobResource> {
    return (await this.custom.createNamespacedCustomObject({ ...this.coords(), body: job })) as UtilityJobResource
  }

  /** The job once terminal, or as it is when `timeoutMs` runs out (or the signal aborts). */
  waitForTerminal(job: UtilityJobResource, timeoutMs: number, signal?: AbortSignal): Promise<UtilityJobResource> {
    return this.waitUntil(job, isTerminal, timeoutMs, signal)
  }

  /**
   * The job once `done(job)` holds, or as it is at the timeout. `done` must stay true once true
   * (job states only move forward), so any one observation that satisfies it is the answer.
   */
  async waitUntil(
    job: UtilityJobResource,
    done: JobPredicate,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<UtilityJobResource> {
    if (done(job) || timeoutMs <= 0 || signal?.aborted) return job
    const name = job.metadata.name
    return new Promise((resolve) => {
      let set = this.waiters.get(name)
      if (!set) this.waiters.set(name, (set = new Set()))
      let seen = job
      let settled = false
      const settle = (answer: UtilityJobResource | undefined) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        signal?.removeEventListener('abort', onTimeout)
        set!.delete(waiter)
        if (set!.size === 0 && this.waiters.get(name) === set) this.waiters.delete(name)
        if (answer) resolve(answer)
        else
          this.read(job.spec.jobId).then(
            (now) => resolve(now ?? seen),
            () => resolve(seen),
          )
      }
      const waiter: Waiter = {
        jobId: job.spec.jobId,
        wake: (j) => {
          if (j.spec.jobId !== job.spec.jobId) return
          seen = j
          if (done(j)) settle(j)
        },
      }
      // At the end of the wait the answer is the job as it is then, read afresh.
      const onTimeout = () => settle(undefined)
      const timer = setTimeout(onTimeout, timeoutMs)
      signal?.addEventListener('abort', onTimeout)
      set.add(waiter)
      // The job may have changed before the waiter was registered.
      this.lookAgain(waiter)
    })
  }

  async patchSpec(name: string, spec: Record<string, unknown>): Promise<UtilityJobResource> {
    return (await this.custom.patchNamespacedCustomObject(
      { ...this.coords(), name, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as UtilityJobResource
  }
}
