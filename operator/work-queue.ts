/**
 * A keyed work queue in the manner of client-go's: a key is queued at most once, a key being
 * processed is never handed to a second worker (a re-add while processing runs it again
 * afterwards), failures back off exponentially per key, and `addAfter` schedules a later look.
 */
export interface WorkQueueOptions {
  baseDelayMs?: number
  maxDelayMs?: number
}

export type Worker = (key: string) => Promise<{ requeueAfterMs?: number } | void>

export class WorkQueue {
  private readonly queue: string[] = []
  private readonly queued = new Set<string>()
  private readonly processing = new Set<string>()
  private readonly dirty = new Set<string>()
  private readonly failures = new Map<string, number>()
  private readonly timers = new Map<string, NodeJS.Timeout>()
  private readonly waiters: Array<() => void> = []
  private stopped = false
  private readonly baseDelayMs: number
  private readonly maxDelayMs: number

  constructor(opts: WorkQueueOptions = {}) {
    this.baseDelayMs = opts.baseDelayMs ?? 200
    this.maxDelayMs = opts.maxDelayMs ?? 60_000
  }

  get depth(): number {
    return this.queue.length
  }

  add(key: string): void {
    if (this.stopped) return
    if (this.processing.has(key)) {
      this.dirty.add(key)
      return
    }
    if (this.queued.has(key)) return
    this.queued.add(key)
    this.queue.push(key)
    this.waiters.shift()?.()
  }

  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return
    const existing = this.timers.get(key)
    if (existing) clearTimeout(existing)
    const t = setTimeout(
      () => {
        this.timers.delete(key)
        this.add(key)
      },
      Math.max(0, delayMs),
    )
    t.unref()
    this.timers.set(key, t)
  }

  /** Requeues after a failure, with exponential back-off per key. */
  addRateLimited(key: string): number {
    const n = this.failures.get(key) ?? 0
    this.failures.set(key, n + 1)
    const delay = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** n)
    this.addAfter(key, delay)
    return delay
  }

  forget(key: string): void {
    this.failures.delete(key)
  }

  private async next(): Promise<string | undefined> {
    while (!this.stopped && this.queue.length === 0) await new Promise<void>((r) => this.waiters.push(r))
    if (this.stopped) return undefined
    const key = this.queue.shift()!
    this.queued.delete(key)
    this.processing.add(key)
    return key
  }

  private done(key: string): void {
    this.processing.delete(key)
    if (this.dirty.delete(key)) this.add(key)
  }

  /** Runs `concurrency` workers until stop(); errors requeue the key with back-off. */
  async run(
    worker: Worker,
    concurrency: number,
    onError: (key: string, err: unknown, retryInMs: number) => void,
  ): Promise<void> {
    const loop = async () => {
      for (;;) {
        const key = await this.next()
        if (key === undefined) return
        try {
          const res = await worker(key)
          this.forget(key)
          if (res?.requeueAfterMs !== undefined) this.addAfter(key, res.requeueAfterMs)
        } catch (err) {
          onError(key, err, this.addRateLimited(key))
        } finally {
          this.done(key)
        }
      }
    }
    await Promise.all(Array.from({ length: concurrency }, loop))
  }

  stop(): void {
    this.stopped = true
    for (const t of this.timers.values()) clearTimeout(t)
    this.timers.clear()
    for (const w of this.waiters.splice(0)) w()
  }
}
