import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { ENV, POOL, POOL_RUNNER_LOST, type PoolAssignment, type PoolJobState } from '../../contract/runner-protocol.js'
import type { JobOutcome } from './run-utility.js'
import { loadRunnerConfig, type RunnerConfig } from './runner-config.js'
import { listProcesses, type ProcessEntry, strayProcesses } from './stray-processes.js'

/**
 * Pool mode (docs/adr/0026-runner-pools.md): one long-lived runner process takes one job at a
 * time from the operator. A pod is generic until its first job and serves that job's tenant
 * alone from then on; it retires (its process exits and the operator deletes the pod) after
 * `restartEvery` jobs, after `idleSeconds` without a job, after a job that crashed or ran out of
 * time, and when a process it did not start is alive before a job. This is the
 * utility-independent part; the utility brings a PoolWorker.
 */

/** What a utility brings to a pool runner: html-pdf keeps its browser warm, the others keep nothing. */
export interface PoolWorker {
  /** Warms up before the first job (html-pdf: starts the browser). */
  start(): Promise<void>
  /** Runs one job (never throws: a failure is an outcome). Its scratch files go in `config.scratchDir`. */
  run(config: RunnerConfig): Promise<JobOutcome>
  /** Stops the job in progress at once (its deadline passed). */
  abort(): void
  /** The processes the worker keeps between jobs (html-pdf: the browser); their descendants are its too. */
  kept(): number[]
  /**
   * Called once a job's outcome was read and the runner waits for its next job: work the next job
   * would otherwise start with can be done here, off its path (html-pdf: its fresh browser context).
   */
  between?(): void
}

/** Why a pod retires: it takes no more jobs, and its process exits once its last job's outcome was read. */
export type RetireReason =
  'jobs' | 'idle' | 'crashed' | 'deadline' | 'stray-process' | 'tenant-mismatch' | 'age' | 'stopping'

/** How long a retiring runner waits for the operator to read its last job's outcome before it exits anyway. */
const RETIRE_GRACE_MS = 30_000
/** How long an aborted job may take to unwind before the process gives up and exits. */
const ABORT_UNWIND_MS = 10_000
/** States of the jobs run lately, kept for the operator to read. */
const KEEP_STATES = 64

/** The settings a pool runner reads at start (its pod's environment). */
export interface PoolSettings {
  token: string
  port: number
  /** The pod retires after this many jobs. */
  restartEvery: number
  /** A pod bound to a tenant retires after this long without a job. */
  idleSeconds: number
  /** The job-independent part of every job's RunnerConfig. */
  base: Omit<RunnerConfig, 'jobId' | 'utility' | 'createdAtMs' | 'storage' | 'scratchDir'> & {
    storage: Pick<RunnerConfig['storage'], 'endpoint' | 'region' | 'bucket'>
  }
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, max: number): number {
  const n = Number(env[name] ?? String(fallback))
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`${name} must be a whole number from 1 to ${max}`)
  return n
}

/**
 * Reads the pool settings, then takes the pod's token out of the environment: no process the
 * runner starts (a browser, a renderer a hostile page compromised) inherits it.
 */
export function loadPoolSettings(env: NodeJS.ProcessEnv = process.env): PoolSettings {
  const token = env[POOL.tokenEnv] ?? ''
  if (token.length < 32) throw new Error(`${POOL.tokenEnv} must be set (32 characters or more)`)
  delete env[POOL.tokenEnv]
  const restartEvery = wholeNumber(env, POOL.restartEveryEnv, 100, 100_000)
  const idleSeconds = wholeNumber(env, POOL.idleSecondsEnv, 300, 86_400)
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
    idleSeconds,
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
  /** The runner is stopping (its pod goes): it failed then, whatever its run returns. */
  stopped?: boolean
  /** After an abort: the process exits if the run has not unwound by then. */
  unwind?: NodeJS.Timeout
}

export type TakeRefusal = 'busy' | 'known' | 'starting' | 'retired' | 'tenant'

/** How a runner looks for processes left behind: off where the runner is not its container's first process. */
export type ProcessCheck = () => ProcessEntry[]

/** The container's processes the runner neither is nor keeps; none when the runner is not pid 1 (no container of its own). */
export function containerProcessCheck(worker: PoolWorker): ProcessCheck {
  if (process.pid !== 1) return () => []
  return () => strayProcesses(listProcesses(), process.pid, worker.kept())
}

/** Where each job's scratch directory comes from, and how it goes. */
export interface ScratchDirs {
  make(): Promise<string>
  remove(dir: string): Promise<void>
}

const tempScratchDirs: ScratchDirs = {
  make: () => mkdtemp(join(tmpdir(), 'job-')),
  remove: (dir) => rm(dir, { recursive: true, force: true }).catch(() => {}),
}

/**
 * One pool runner: binds to the tenant of its first job, takes that tenant's jobs one at a time
 * (each with a scratch directory of its own, removed after it), fails a job `upstream_timeout`
 * at its deadline, keeps outcomes for the operator to read, and retires when it must.
 */
export class PoolRunner {
  private readonly states = new Map<string, PoolJobState>()
  private current: Current | undefined
  private tenant: string | null = null
  private served = 0
  private ready = false
  private retiring: RetireReason | null = null
  /** The last job's outcome, until the operator has read it (a retiring runner waits for that). */
  private unread: string | null = null
  private idleTimer: NodeJS.Timeout | undefined
  private exitTimer: NodeJS.Timeout | undefined
  private readonly startedAt = performance.now()
  /** Callers waiting for a running job to end: job → their wake-ups. */
  private readonly waiters = new Map<string, Set<() => void>>()

  private readonly exit: (code: number) => void
  private readonly strays: ProcessCheck
  private readonly scratch: ScratchDirs

  constructor(
    private readonly worker: PoolWorker,
    private readonly settings: PoolSettings,
    private readonly log: Logger,
    o: { exit?: (code: number) => void; strays?: ProcessCheck; scratch?: ScratchDirs } = {},
  ) {
    this.exit = o.exit ?? ((code) => process.exit(code))
    this.strays = o.strays ?? (() => [])
    this.scratch = o.scratch ?? tempScratchDirs
  }

  async start(): Promise<void> {
    await this.worker.start()
    this.ready = true
    this.log.info({ restartEvery: this.settings.restartEvery }, 'pool runner ready')
  }

  /** Ready while it takes jobs: a retiring runner is not (its pod leaves the Service and the pool). */
  health(): { ready: boolean; busy: boolean; jobs: number; bound: boolean; retiring: RetireReason | null } {
    return {
      ready: this.ready && !this.retiring,
      busy: this.current !== undefined,
      jobs: this.served,
      bound: this.tenant !== null,
      retiring: this.retiring,
    }
  }

  /** A job's state; reading a finished one lets a retiring runner exit. */
  state(jobId: string): PoolJobState | undefined {
    const s = this.states.get(jobId)
    if (s && s.state !== 'running' && this.unread === jobId) {
      this.unread = null
      if (this.retiring && !this.current) this.exitSoon()
      else if (!this.retiring && !this.current) this.worker.between?.()
    }
    return s
  }

  /**
   * Resolves when the job is no longer running, or after `ms` (whichever comes first): the
   * operator's state request waits here instead of asking again and again.
   */
  async untilEnded(jobId: string, ms: number): Promise<void> {
    if (this.states.get(jobId)?.state !== 'running') return
    await new Promise<void>((resolve) => {
      const waiters = this.waiters.get(jobId) ?? new Set<() => void>()
      this.waiters.set(jobId, waiters)
      const done = () => {
        clearTimeout(timer)
        waiters.delete(done)
        if (!waiters.size) this.waiters.delete(jobId)
        resolve()
      }
      const timer = setTimeout(done, ms)
      waiters.add(done)
    })
  }

  /** Takes the job, or says why not. */
  take(a: PoolAssignment): { taken: true } | { taken: false; why: TakeRefusal } {
    if (this.states.has(a.jobId)) return { taken: false, why: 'known' }
    if (!this.ready) return { taken: false, why: 'starting' }
    if (this.retiring) return { taken: false, why: 'retired' }
    if (this.current) return { taken: false, why: 'busy' }
    if (this.tenant !== null && this.tenant !== a.tenant) {
      // The operator sent another tenant's job to a bound pod: never run it here; this pod goes.
      this.log.warn({ jobId: a.jobId }, "another tenant's job refused")
      this.retire('tenant-mismatch')
      return { taken: false, why: 'tenant' }
    }
    if (performance.now() - this.startedAt > (POOL.maxLifeSeconds - POOL.lastHourSeconds) * 1000) {
      this.retire('age') // the pod's activeDeadlineSeconds is near: no job may run into it
      return { taken: false, why: 'retired' }
    }
    const strays = this.strays()
    if (strays.length) {
      this.log.warn({ strays: strays.slice(0, 10) }, 'a process the runner did not start is alive')
      this.retire('stray-process')
      return { taken: false, why: 'retired' }
    }
    clearTimeout(this.idleTimer)
    this.tenant = a.tenant
    const timer = setTimeout(() => this.deadlinePassed(a), a.deadlineSeconds * 1000)
    this.current = { jobId: a.jobId, timedOut: false, timer }
    this.remember({ jobId: a.jobId, state: 'running' })
    void this.runJob(a)
    return { taken: true }
  }

  private async runJob(a: PoolAssignment): Promise<void> {
    const log = this.log.child({ jobId: a.jobId, utility: a.utility })
    this.served++
    log.info({ deadlineSeconds: a.deadlineSeconds, sinceStart: this.served }, 'job started')
    let outcome: JobOutcome
    let scratchDir: string | undefined
    try {
      scratchDir = await this.scratch.make()
      const config: RunnerConfig = {
        ...this.settings.base,
        jobId: a.jobId,
        utility: a.utility,
        createdAtMs: Date.parse(a.createdAt),
        scratchDir,
        answerResult: true,
        ...(a.credentials.sealKey ? { sealKey: Buffer.from(a.credentials.sealKey, 'base64url') } : {}),
        ...(a.sealedInput ? { sealedInput: a.sealedInput } : {}),
        storage: {
          ...this.settings.base.storage,
          accessKey: a.credentials.accessKey,
          secretKey: a.credentials.secretKey,
          sessionToken: a.credentials.sessionToken || undefined,
        },
      }
      outcome = await this.worker.run(config)
    } catch (err) {
      log.error({ err }, 'pool runner failed to run the job')
      outcome = {
        ok: false,
        failure: { code: 'upstream_error', message: 'The utility failed unexpectedly.' },
        exitCode: 1,
      }
    }
    if (scratchDir) await this.scratch.remove(scratchDir)
    const current = this.current!
    clearTimeout(current.timer)
    clearTimeout(current.unwind)
    this.current = undefined
    if (!current.timedOut && !current.stopped) {
      this.remember(
        outcome.ok
          ? { jobId: a.jobId, state: 'succeeded', ...(outcome.result ? { result: outcome.result } : {}) }
          : { jobId: a.jobId, state: 'failed', failure: outcome.failure },
      )
    }
    if (current.timedOut) this.retire('deadline')
    // A crash may have left the worker's state broken.
    else if (!outcome.ok && outcome.exitCode === 1) this.retire('crashed')
    else if (this.served >= this.settings.restartEvery) this.retire('jobs')
    else if (this.retiring) this.retire(this.retiring)
    else {
      this.idleTimer = setTimeout(() => this.retire('idle'), this.settings.idleSeconds * 1000)
      this.idleTimer.unref?.()
    }
  }

  /**
   * The runner is told to stop (its pod is deleted): it takes no job again, and a job in
   * progress fails now as one whose runner went away, before stopping its worker can make it fail
   * for some other reason the job's input is not to blame for.
   */
  stopping(): void {
    clearTimeout(this.idleTimer)
    this.retiring = 'stopping'
    const current = this.current
    if (!current || current.timedOut || current.stopped) return
    current.stopped = true
    this.log.warn({ jobId: current.jobId }, 'runner stopping with a job in progress')
    this.remember({ jobId: current.jobId, state: 'failed', failure: POOL_RUNNER_LOST })
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
    this.retire('deadline')
    this.worker.abort()
    // The aborted run must unwind; if it does not, the process exits (the pod goes either way).
    current.unwind = setTimeout(() => {
      this.log.error({ jobId: a.jobId }, 'an aborted job did not stop: exiting')
      this.exit(1)
    }, ABORT_UNWIND_MS)
  }

  /**
   * Takes no more jobs, and exits once no job runs and the last outcome was read (or after a
   * grace period, when nobody reads it).
   */
  private retire(why: RetireReason): void {
    clearTimeout(this.idleTimer)
    if (!this.retiring) this.log.info({ why, jobs: this.served }, 'pool runner retiring')
    this.retiring = why
    if (this.current) return
    if (this.unread === null) return this.exitSoon()
    if (!this.exitTimer) {
      this.exitTimer = setTimeout(() => this.exit(0), RETIRE_GRACE_MS)
      this.exitTimer.unref?.()
    }
  }

  /** Exits after the answer in progress is sent. */
  private exitSoon(): void {
    clearTimeout(this.exitTimer)
    this.exitTimer = setTimeout(() => this.exit(0), 50)
  }

  private remember(s: PoolJobState): void {
    this.states.delete(s.jobId)
    this.states.set(s.jobId, s)
    if (s.state !== 'running') {
      this.unread = s.jobId
      for (const wake of [...(this.waiters.get(s.jobId) ?? [])]) wake()
    }
    while (this.states.size > KEEP_STATES) this.states.delete(this.states.keys().next().value!)
  }
}
