import { timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import type { Logger } from 'pino'
import { ENV, POOL, type PoolAssignment, type PoolJobState } from '../../contract/runner-protocol.js'
import { parseAssignment } from '../../platform/pool-protocol.js'
import type { JobOutcome } from './run-utility.js'
import { loadRunnerConfig, type RunnerConfig } from './runner-config.js'

/**
 * Pool mode (docs/adr/0026-runner-pools.md): one long-lived runner process takes one job at a
 * time from the operator, keeping its warm state (html-pdf: the browser) between jobs of one
 * tenant. This is the utility-independent part: the HTTP interface, one job at a time, the
 * job's deadline, and when the warm state must start afresh.
 */

/** What a utility brings to a pool runner. */
export interface PoolWorker {
  /** Makes the warm state ready for the next job; `fresh`: throw the old one away first. */
  prepare(fresh: boolean): Promise<void>
  /** Runs one job (never throws: a failure is an outcome). */
  run(config: RunnerConfig): Promise<JobOutcome>
  /** Stops the job in progress at once (its deadline passed); the warm state is lost with it. */
  abort(): void
}

/** What the warm state has served since it started. */
export interface WarmState {
  /** The tenant it served (an opaque hash), null when it has served nobody yet. */
  tenant: string | null
  jobs: number
  /** Whether it is usable (not aborted, not crashed). */
  usable: boolean
}

/**
 * Whether the warm state must start afresh before a job of `tenant` (pure): it served another
 * tenant (a browser's caches, cookies and processes never carry one tenant's pages into
 * another's job), it reached `restartEvery` jobs, or it is not usable.
 */
export function needsFreshStart(warm: WarmState, tenant: string, restartEvery: number): boolean {
  return !warm.usable || (warm.tenant !== null && warm.tenant !== tenant) || warm.jobs >= restartEvery
}

/** How long an aborted job may take to unwind before the process gives up and exits. */
const ABORT_UNWIND_MS = 10_000
/** States of the jobs run lately, kept for the operator to read. */
const KEEP_STATES = 64

/** The settings a pool runner reads at start (its pod's environment). */
export interface PoolSettings {
  token: string
  port: number
  restartEvery: number
  /** The job-independent part of every job's RunnerConfig. */
  base: Omit<RunnerConfig, 'jobId' | 'utility' | 'createdAtMs' | 'storage'> & {
    storage: Pick<RunnerConfig['storage'], 'endpoint' | 'region' | 'bucket'>
  }
}

export function loadPoolSettings(env: NodeJS.ProcessEnv = process.env): PoolSettings {
  const token = env[POOL.tokenEnv] ?? ''
  if (token.length < 32) throw new Error(`${POOL.tokenEnv} must be set (32 characters or more)`)
  const restartEvery = Number(env[POOL.restartEveryEnv] ?? '100')
  if (!Number.isInteger(restartEvery) || restartEvery < 1)
    throw new Error(`${POOL.restartEveryEnv} must be a whole number of 1 or more`)
  // The job-mode reader, with placeholders for what each assignment brings.
  const placeholder = 'assigned-per-job'
  const c = loadRunnerConfig({
    ...env,
    [ENV.jobId]: placeholder,
    [ENV.utility]: placeholder,
    [ENV.createdAt]: new Date(0).toISOString(),
    [ENV.accessKey]: placeholder,
    [ENV.secretKey]: placeholder,
  })
  return {
    token,
    port: POOL.port,
    restartEvery,
    base: {
      outbound: c.outbound,
      terminationMessagePath: c.terminationMessagePath,
      storage: { endpoint: c.storage.endpoint, region: c.storage.region, bucket: c.storage.bucket },
    },
  }
}

/** The job a pool runner holds: one at a time. */
interface Current {
  jobId: string
  timer: NodeJS.Timeout
  /** Its deadline passed: it failed then, whatever its run returns. */
  timedOut: boolean
  /** After an abort: the process exits if the run has not unwound by then. */
  unwind?: NodeJS.Timeout
}

/**
 * One pool runner: takes a job when idle, starts the warm state afresh when `needsFreshStart`
 * says so, fails the job `upstream_timeout` at its deadline (and aborts it), and keeps the
 * outcome for the operator to read.
 */
export class PoolRunner {
  private readonly states = new Map<string, PoolJobState>()
  private current: Current | undefined
  private warm: WarmState = { tenant: null, jobs: 0, usable: false }
  private ready = false

  constructor(
    private readonly worker: PoolWorker,
    private readonly settings: PoolSettings,
    private readonly log: Logger,
    private readonly exit: (code: number) => void = (code) => process.exit(code),
  ) {}

  /** Warms up before the first job. */
  async start(): Promise<void> {
    await this.worker.prepare(true)
    this.warm = { tenant: null, jobs: 0, usable: true }
    this.ready = true
    this.log.info('pool runner ready')
  }

  health(): { ready: boolean; busy: boolean; jobs: number } {
    return { ready: this.ready, busy: this.current !== undefined, jobs: this.warm.jobs }
  }

  state(jobId: string): PoolJobState | undefined {
    return this.states.get(jobId)
  }

  /** Takes the job, or says why not: `busy` (another job runs) or `known` (this one was taken). */
  take(a: PoolAssignment): { taken: true } | { taken: false; why: 'busy' | 'known' | 'starting' } {
    if (this.states.has(a.jobId)) return { taken: false, why: 'known' }
    if (!this.ready) return { taken: false, why: 'starting' }
    if (this.current) return { taken: false, why: 'busy' }
    const timer = setTimeout(() => this.deadlinePassed(a), a.deadlineSeconds * 1000)
    this.current = { jobId: a.jobId, timer, timedOut: false }
    this.remember({ jobId: a.jobId, state: 'running' })
    void this.runJob(a)
    return { taken: true }
  }

  private async runJob(a: PoolAssignment): Promise<void> {
    const log = this.log.child({ jobId: a.jobId, utility: a.utility, tenant: a.tenant })
    let outcome: JobOutcome
    try {
      const fresh = needsFreshStart(this.warm, a.tenant, this.settings.restartEvery)
      if (fresh) {
        log.info(
          {
            why: !this.warm.usable ? 'unusable' : this.warm.jobs >= this.settings.restartEvery ? 'jobs' : 'tenant',
            served: this.warm.jobs,
          },
          'warm state started afresh',
        )
        this.warm = { tenant: null, jobs: 0, usable: false }
      }
      await this.worker.prepare(fresh)
      this.warm = { tenant: a.tenant, jobs: this.warm.jobs + 1, usable: true }
      log.info({ deadlineSeconds: a.deadlineSeconds, fresh, sinceStart: this.warm.jobs }, 'job started')
      const config: RunnerConfig = {
        ...this.settings.base,
        jobId: a.jobId,
        utility: a.utility,
        createdAtMs: Date.parse(a.createdAt),
        storage: {
          ...this.settings.base.storage,
          ...a.credentials,
          sessionToken: a.credentials.sessionToken || undefined,
        },
      }
      outcome = await this.worker.run(config)
    } catch (err) {
      log.error({ err }, 'pool runner failed to run the job')
      this.warm.usable = false
      outcome = {
        ok: false,
        failure: { code: 'upstream_error', message: 'The utility failed unexpectedly.' },
        exitCode: 1,
      }
    }
    const current = this.current!
    clearTimeout(current.timer)
    clearTimeout(current.unwind)
    this.current = undefined
    if (current.timedOut) return // failed at its deadline
    // A crash may have left the warm state broken: the next job starts it afresh.
    if (!outcome.ok && outcome.exitCode === 1) this.warm.usable = false
    this.remember(
      outcome.ok
        ? { jobId: a.jobId, state: 'succeeded' }
        : { jobId: a.jobId, state: 'failed', failure: outcome.failure },
    )
  }

  private deadlinePassed(a: PoolAssignment): void {
    const current = this.current
    if (current?.jobId !== a.jobId) return
    current.timedOut = true
    this.log.warn({ jobId: a.jobId, deadlineSeconds: a.deadlineSeconds }, 'job ran past its time limit: aborted')
    this.remember({
      jobId: a.jobId,
      state: 'failed',
      failure: {
        code: 'upstream_timeout',
        message: `The utility did not finish within its time limit of ${a.deadlineSeconds} s.`,
      },
    })
    this.warm.usable = false
    this.worker.abort()
    // The aborted run must unwind before the next job; if it does not, the pod goes and the pool
    // makes a new one.
    current.unwind = setTimeout(() => {
      this.log.error({ jobId: a.jobId }, 'an aborted job did not stop: exiting')
      this.exit(1)
    }, ABORT_UNWIND_MS)
  }

  private remember(s: PoolJobState): void {
    this.states.delete(s.jobId)
    this.states.set(s.jobId, s)
    while (this.states.size > KEEP_STATES) this.states.delete(this.states.keys().next().value!)
  }
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

function authorized(req: http.IncomingMessage, token: string): boolean {
  const got = Buffer.from(req.headers.authorization ?? '')
  const want = Buffer.from(`Bearer ${token}`)
  return got.length === want.length && timingSafeEqual(got, want)
}

/** The pool runner's HTTP interface (POOL in contract/runner-protocol.ts). */
export function poolServer(runner: PoolRunner, settings: PoolSettings, log: Logger): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pool')
    if (req.method === 'GET' && url.pathname === '/healthz') {
      const h = runner.health()
      return json(res, h.ready ? 200 : 503, h)
    }
    if (!authorized(req, settings.token)) return json(res, 401, { error: 'unauthorized' })
    const m = /^\/jobs\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname)
    if (req.method === 'GET' && m) {
      const s = runner.state(m[1])
      return s ? json(res, 200, s) : json(res, 404, { error: 'unknown job' })
    }
    if (req.method !== 'POST' || url.pathname !== '/jobs') return json(res, 404, { error: 'not found' })
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > POOL.maxAssignmentBytes) {
        json(res, 413, { error: 'assignment too large' })
        req.destroy()
        return
      }
      chunks.push(c)
    })
    req.on('end', () => {
      if (res.headersSent) return
      const a = parseAssignment(Buffer.concat(chunks).toString('utf8'))
      if (typeof a === 'string') {
        log.warn({ problem: a }, 'assignment refused')
        return json(res, 400, { error: a })
      }
      const took = runner.take(a)
      if (took.taken) return json(res, 202, runner.state(a.jobId))
      if (took.why === 'known') return json(res, 200, runner.state(a.jobId))
      return json(res, took.why === 'busy' ? 409 : 503, { error: took.why })
    })
  })
}
