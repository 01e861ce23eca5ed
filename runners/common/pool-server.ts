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

/**
 * What a utility brings to a pool runner: up to `warmSlots` warm states (html-pdf: browsers),
 * each serving one tenant between its starts.
 */
export interface PoolWorker {
  /** Starts warm state `slot` afresh (the old one, if any, thrown away first). */
  start(slot: number): Promise<void>
  /** Runs one job in warm state `slot` (never throws: a failure is an outcome). */
  run(slot: number, config: RunnerConfig): Promise<JobOutcome>
  /** Stops the job in progress in `slot` at once (its deadline passed); that warm state is lost with it. */
  abort(slot: number): void
}

/** What one warm state has served since it started. */
export interface WarmState {
  /** The tenant it served (an opaque hash), null when it has served nobody yet. */
  tenant: string | null
  jobs: number
  /** Whether it is usable (started, not aborted, not crashed). */
  usable: boolean
  /** When it last took a job (a serial): the least recent goes first to another tenant. */
  lastUsed: number
}

/** Why a warm state starts afresh before a job. */
export type FreshStart = 'first' | 'unusable' | 'jobs' | 'tenant'

/**
 * The warm state for a job of `tenant` (pure), and why it must start afresh first, if it must:
 * the tenant's own state (afresh after `restartEvery` jobs, or when unusable); else one that
 * served nobody yet; else one never started; else the least recently used, which served another
 * tenant and so starts afresh (a browser's caches, cookies and processes never carry one
 * tenant's pages into another's job).
 */
export function pickWarmState(
  slots: readonly WarmState[],
  tenant: string,
  restartEvery: number,
): { slot: number; fresh: FreshStart | null } {
  const own = slots.findIndex((w) => w.tenant === tenant)
  if (own >= 0) {
    const w = slots[own]
    return { slot: own, fresh: !w.usable ? 'unusable' : w.jobs >= restartEvery ? 'jobs' : null }
  }
  const unused = slots.findIndex((w) => w.tenant === null && w.usable)
  if (unused >= 0) return { slot: unused, fresh: null }
  const never = slots.findIndex((w) => w.tenant === null)
  if (never >= 0) return { slot: never, fresh: 'first' }
  let lru = 0
  for (let i = 1; i < slots.length; i++) if (slots[i].lastUsed < slots[lru].lastUsed) lru = i
  return { slot: lru, fresh: 'tenant' }
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
  /** Warm states (html-pdf: browsers) one pod keeps, each for one tenant at a time. */
  warmSlots: number
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
  const warmSlots = Number(env[POOL.warmSlotsEnv] ?? '1')
  if (!Number.isInteger(warmSlots) || warmSlots < 1 || warmSlots > 16)
    throw new Error(`${POOL.warmSlotsEnv} must be a whole number from 1 to 16`)
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
    warmSlots,
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
  /** The warm state it runs in. */
  slot: number
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
  private warm: WarmState[] = []
  private served = 0
  private ready = false

  constructor(
    private readonly worker: PoolWorker,
    private readonly settings: PoolSettings,
    private readonly log: Logger,
    private readonly exit: (code: number) => void = (code) => process.exit(code),
  ) {}

  /** Warms up the first warm state before the first job; the others start when a job needs them. */
  async start(): Promise<void> {
    this.warm = Array.from({ length: this.settings.warmSlots }, () => ({
      tenant: null,
      jobs: 0,
      usable: false,
      lastUsed: 0,
    }))
    await this.worker.start(0)
    this.warm[0].usable = true
    this.ready = true
    this.log.info({ warmSlots: this.settings.warmSlots }, 'pool runner ready')
  }

  health(): { ready: boolean; busy: boolean; jobs: number } {
    return { ready: this.ready, busy: this.current !== undefined, jobs: this.served }
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
    const { slot, fresh } = pickWarmState(this.warm, a.tenant, this.settings.restartEvery)
    this.current = { jobId: a.jobId, slot, timedOut: false, timer }
    this.remember({ jobId: a.jobId, state: 'running' })
    void this.runJob(a, slot, fresh)
    return { taken: true }
  }

  private async runJob(a: PoolAssignment, slot: number, fresh: FreshStart | null): Promise<void> {
    const log = this.log.child({ jobId: a.jobId, utility: a.utility, tenant: a.tenant, slot })
    const warm = this.warm[slot]
    let outcome: JobOutcome
    try {
      if (fresh) {
        log.info({ why: fresh, served: warm.jobs }, 'warm state started afresh')
        Object.assign(warm, { tenant: null, jobs: 0, usable: false })
        await this.worker.start(slot)
      }
      Object.assign(warm, { tenant: a.tenant, jobs: warm.jobs + 1, usable: true, lastUsed: ++this.served })
      log.info({ deadlineSeconds: a.deadlineSeconds, fresh: fresh !== null, sinceStart: warm.jobs }, 'job started')
      const config: RunnerConfig = {
        ...this.settings.base,
        jobId: a.jobId,
        utility: a.utility,
        createdAtMs: Date.parse(a.createdAt),
        storage: {
          ...this.settings.base.storage,
          accessKey: a.credentials.accessKey,
          secretKey: a.credentials.secretKey,
          sessionToken: a.credentials.sessionToken || undefined,
        },
      }
      outcome = await this.worker.run(slot, config)
    } catch (err) {
      log.error({ err }, 'pool runner failed to run the job')
      warm.usable = false
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
    if (!outcome.ok && outcome.exitCode === 1) warm.usable = false
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
    this.warm[current.slot].usable = false
    this.worker.abort(current.slot)
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
