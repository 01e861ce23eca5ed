import type { RunnerProgress } from '../../contract/runner-protocol.js'
import { isoMs } from '../../contract/time.js'

export interface ProgressReporterOptions {
  /** Least time between two writes (ms). */
  intervalMs: number
  /** No write before this long after the reporter is made (ms): a job that ends sooner writes none. */
  firstAfterMs?: number
  now?: () => number
}

/**
 * Hands a runner's progress to storage at most once per interval, never two writes at once and
 * always the newest value: the first report goes out once `firstAfterMs` has passed (at once by
 * default; it carries the total), later ones wait for the interval, and a report made while a
 * write is in flight replaces the one waiting. A short job's result manifest carries its progress,
 * so it need not write any.
 * A failed write is dropped: progress is advisory, and the job's outcome never depends on it.
 */
export class ProgressReporter {
  private lastWriteAt = -Infinity
  private waiting: RunnerProgress | null = null
  private newest: RunnerProgress | null = null
  private writing: Promise<void> | null = null
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private written = false
  private readonly now: () => number

  constructor(
    private readonly write: (progress: RunnerProgress) => Promise<void>,
    private readonly o: ProgressReporterOptions,
  ) {
    this.now = o.now ?? Date.now
    if (o.firstAfterMs) this.lastWriteAt = this.now() + o.firstAfterMs - o.intervalMs
  }

  report(done: number, total: number | null): void {
    if (this.stopped) return
    this.newest = this.waiting = { done, total, at: isoMs(this.now()) }
    this.pump()
  }

  /** The newest report, written or not (the result manifest carries it). */
  get last(): RunnerProgress | null {
    return this.newest
  }

  /** Whether a report went to storage (a write was sent, whether or not it landed). */
  get wrote(): boolean {
    return this.written
  }

  /** No more writes (the run is over: its result says the rest). Resolves once none is in flight. */
  async stop(): Promise<void> {
    this.stopped = true
    this.waiting = null
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    await this.writing
  }

  private pump(): void {
    if (this.writing || this.timer || !this.waiting || this.stopped) return
    const wait = this.lastWriteAt + this.o.intervalMs - this.now()
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined
        this.pump()
      }, wait)
      this.timer.unref?.()
      return
    }
    const progress = this.waiting
    this.waiting = null
    this.lastWriteAt = this.now()
    this.written = true
    this.writing = this.write(progress)
      .catch(() => {})
      .finally(() => {
        this.writing = null
        this.pump()
      })
  }
}
