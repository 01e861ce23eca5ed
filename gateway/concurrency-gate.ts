/** Thrown when a gate's queue is full: the caller answers "busy, retry shortly". */
export class GateFullError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('too many requests waiting')
    this.name = 'GateFullError'
  }
}

/**
 * At most `concurrency` tasks run at once; up to `maxQueued` more wait their turn in arrival
 * order, and any beyond that are refused at once (GateFullError) instead of piling up memory
 * and latency. For expensive work that anyone can ask for, such as argon2 before sign-in.
 */
export class ConcurrencyGate {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(
    readonly concurrency: number,
    readonly maxQueued: number,
  ) {
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('concurrency must be a positive integer')
  }

  get inFlight(): number {
    return this.running
  }

  get queued(): number {
    return this.waiting.length
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.maxQueued) throw new GateFullError(1)
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    } else {
      this.running++
    }
    try {
      return await task()
    } finally {
      const next = this.waiting.shift()
      // The slot passes straight to the next waiter; otherwise it is freed.
      if (next) next()
      else this.running--
    }
  }
}
