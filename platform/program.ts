import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Logger } from 'pino'

/**
 * The frame a program's main wires into, in the spirit of controller-runtime's Manager: it owns
 * the watched caches and their first sync, the readiness checks, the probe and metrics answers,
 * the work that runs only while this replica leads (started when leadership is won, stopped at
 * the fence or when it is lost), and shutdown on a signal with a drain deadline. A main builds
 * its parts, registers them here, and starts.
 */

/** Work that runs until its signal aborts (then returns), or fails (the program exits 1). */
export interface Runnable {
  name: string
  run(signal: AbortSignal): Promise<void> | void
}

/** A cache (an informer): synced once its first list is in, stopped at shutdown. */
export interface Cache {
  synced: Promise<unknown>
  stop(): Promise<void> | void
}

/**
 * A readiness check: null when fine, else the reason the program is not ready. One that throws
 * or takes longer than the check timeout reports `<name> unreachable`.
 */
export type Check = () => Promise<string | null> | string | null

export interface ProgramOptions {
  name: string
  log: Logger
  /** How long shutdown waits for its steps before exiting anyway. Default 10 s. */
  drainMs?: number
  /** How long one readiness check may take before it counts as failed. Default 2 s. */
  checkTimeoutMs?: number
  /** Ends the process (tests pass their own). Default process.exit. */
  exit?: (code: number) => void
}

export interface Metrics {
  /** The program's metrics in the exposition a scraper asks for (platform/metrics-exposition.ts). */
  exposition: { answer(accept: string | undefined): Promise<{ contentType: string; body: string }> }
  /** Sets gauges read at scrape time (queue depths). */
  beforeScrape?: () => void
}

export class Program {
  private readonly checks: Array<{ name: string; check: Check }> = []
  private readonly caches: Array<{ name: string; cache: Cache }> = []
  private readonly leaderOnlyWork: Runnable[] = []
  private readonly stopSteps: Array<{ name: string; step: () => Promise<unknown> | unknown }> = []
  private readonly stopping = new AbortController()
  private leading: { controller: AbortController; done: Promise<unknown> } | undefined
  private synced = false
  private exiting = false

  constructor(private readonly o: ProgramOptions) {}

  /** Aborts when shutdown begins: long waits (a database that is down) end then. */
  get signal(): AbortSignal {
    return this.stopping.signal
  }

  get isLeading(): boolean {
    return this.leading !== undefined
  }

  check(name: string, check: Check): this {
    this.checks.push({ name, check })
    return this
  }

  cache(name: string, cache: Cache): this {
    this.caches.push({ name, cache })
    return this
  }

  /** Work only the leader does; it starts with {@link lead} and stops with {@link stopLeading}. */
  leaderOnly(work: Runnable): this {
    this.leaderOnlyWork.push(work)
    return this
  }

  /** A step of shutdown, run in the order added, after the leader-only work has stopped and before the caches stop. */
  onStop(name: string, step: () => Promise<unknown> | unknown): this {
    this.stopSteps.push({ name, step })
    return this
  }

  /** Waits for every cache's first sync; readiness passes only after. */
  async sync(): Promise<void> {
    await Promise.all(this.caches.map((c) => c.cache.synced))
    this.synced = true
  }

  /** Null when every check passes (and the caches synced and no shutdown began), else the first reason. */
  async ready(): Promise<string | null> {
    if (this.stopping.signal.aborted) return 'shutting down'
    if (!this.synced) return 'caches not synced'
    // Side by side, so an answer takes one check's time at most (the probes' timeout counts on it).
    const problems = await Promise.all(
      this.checks.map(({ name, check }) =>
        within(Promise.resolve().then(check), this.o.checkTimeoutMs ?? 2000).catch(
          // A check that throws or does not answer in time: what it checks cannot be reached.
          () => `${name} unreachable`,
        ),
      ),
    )
    return problems.find((p) => p) ?? null
  }

  /** Answers /healthz, /readyz and (with metrics) /metrics; anything else 404. */
  probes(metrics?: Metrics): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) =>
      void (async () => {
        if (req.url === '/healthz') return void res.end('ok')
        if (req.url === '/readyz') {
          const problem = await this.ready()
          res.statusCode = problem ? 503 : 200
          return void res.end(problem ?? 'ok')
        }
        if (req.url === '/metrics' && metrics) {
          metrics.beforeScrape?.()
          const { contentType, body } = await metrics.exposition.answer(req.headers.accept)
          res.setHeader('content-type', contentType)
          return void res.end(body)
        }
        res.statusCode = 404
        res.end()
      })().catch((err: unknown) => {
        this.o.log.warn({ err: (err as Error).message, url: req.url }, 'probe failed')
        res.statusCode = 500
        res.end()
      })
  }

  /** Starts the leader-only work (once; again after {@link stopLeading}). A failure exits the program. */
  lead(): void {
    if (this.leading || this.stopping.signal.aborted) return
    const controller = new AbortController()
    const done = Promise.all(
      this.leaderOnlyWork.map(async (w) => {
        try {
          await w.run(controller.signal)
        } catch (err) {
          if (controller.signal.aborted) return
          this.o.log.error({ runnable: w.name, err: (err as Error).message }, 'leader-only work failed, exiting')
          this.exit(1)
        }
      }),
    )
    this.leading = { controller, done }
  }

  /** Stops the leader-only work and waits for it to return (its in-flight items finish). */
  async stopLeading(): Promise<void> {
    const leading = this.leading
    if (!leading) return
    this.leading = undefined
    leading.controller.abort()
    await leading.done
  }

  /**
   * The fence, called before every write: once `mayAct` says the lease may no longer be acted
   * on, the program exits at once (1), before the write; a standby takes over.
   */
  fence(mayAct: () => boolean): () => void {
    return () => {
      if (mayAct()) return
      this.o.log.error('leader election: past the renew deadline without a renewal; exiting before acting')
      this.exit(1)
      throw new Error('fenced')
    }
  }

  /**
   * Shutdown: readiness fails at once, the leader-only work stops (in-flight items finish), the
   * stop steps run in order, then the caches stop; past the drain deadline the program exits
   * anyway. Exits 0.
   */
  async shutdown(reason: string): Promise<void> {
    if (this.stopping.signal.aborted) return
    this.stopping.abort()
    this.o.log.info({ signal: reason }, `${this.o.name} stopping`)
    const deadline = setTimeout(() => {
      this.o.log.warn(
        { drainMs: this.o.drainMs ?? 10_000 },
        `${this.o.name}: work still open at the drain deadline; exiting`,
      )
      this.exit(0)
    }, this.o.drainMs ?? 10_000)
    deadline.unref?.()
    try {
      await this.stopLeading()
      for (const { name, step } of this.stopSteps)
        await Promise.resolve()
          .then(step)
          .catch((err: unknown) => this.o.log.warn({ step: name, err: (err as Error).message }, 'stop step failed'))
      await Promise.allSettled(this.caches.map(async (c) => c.cache.stop()))
    } finally {
      clearTimeout(deadline)
    }
    this.o.log.info(`${this.o.name} stopped`)
    this.exit(0)
  }

  /** SIGTERM and SIGINT begin shutdown. */
  handleSignals(): this {
    process.on('SIGTERM', () => void this.shutdown('SIGTERM'))
    process.on('SIGINT', () => void this.shutdown('SIGINT'))
    return this
  }

  private exit(code: number): void {
    if (this.exiting) return
    this.exiting = true
    ;(this.o.exit ?? ((c: number) => process.exit(c)))(code)
  }
}

/** Rejects after `ms`, so a hung connection cannot hold a probe. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms)
      timer.unref?.()
    }),
  ]).finally(() => clearTimeout(timer))
}

/** Calls `fn` every `ms` until `signal` aborts (the first call at once); resolves then. */
export function every(ms: number, fn: () => void, signal: AbortSignal): Promise<void> {
  fn()
  const timer = setInterval(fn, ms)
  return new Promise((resolve) => {
    const stop = () => {
      clearInterval(timer)
      resolve()
    }
    if (signal.aborted) stop()
    else signal.addEventListener('abort', stop, { once: true })
  })
}
