import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { isTerminal } from '../contract/job-view.js'
import type { JobReader } from './job-reader.js'

export type JobPredicate = (job: UtilityJobResource) => boolean

interface Waiter {
  jobId: string
  wake(job: UtilityJobResource): void
}

/**
 * Waiters on jobs, woken by the UtilityJob watch, so long-polls and sync runs answer the moment a
 * job finishes instead of polling. Memory holds the waiters, not the jobs: a job is looked at
 * again through the job reader (on registration, after the watch started over, at the timeout).
 */
export class JobWaiters {
  private readonly waiters = new Map<string, Set<Waiter>>()

  constructor(private readonly reader: Pick<JobReader, 'current'>) {}

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
    this.reader.current(w.jobId).then(
      (job) => job && w.wake(job),
      () => {},
    )
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
          this.reader.current(job.spec.jobId).then(
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
}
