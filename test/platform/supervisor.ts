import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, closeSync, createWriteStream, mkdirSync, openSync } from 'node:fs'
import { constants as osConstants } from 'node:os'
import { dirname } from 'node:path'

export interface ProcessSpec {
  name: string
  command: string
  args: string[]
  env?: NodeJS.ProcessEnv
  cwd?: string
  logFile: string
  /** Echo the process's output to this stream, prefixed with its name. */
  echo?: NodeJS.WritableStream
  /** Called with every child started for this spec: the first and each restart. */
  onStart?: (child: ChildProcess) => void
}

/**
 * What `make dev` does when a process dies on its own: start it again after a delay that doubles
 * from `initialDelayMs` up to `maxDelayMs`, back to the initial delay once a run lasted
 * `resetAfterMs`. (A cluster's Deployment restarts a crashed pod the same way.)
 */
export interface RestartPolicy {
  initialDelayMs: number
  maxDelayMs: number
  resetAfterMs: number
}

export const DEV_RESTART_POLICY: RestartPolicy = { initialDelayMs: 1000, maxDelayMs: 30_000, resetAfterMs: 60_000 }

export interface SupervisorOptions {
  /** Restart processes that exit on their own; none when absent (tests restart what they kill). */
  restart?: RestartPolicy
  /** Told about every exit the supervisor did not ask for, and what it does about it. */
  onUnexpectedExit?: (name: string, code: number | null, restartInMs?: number) => void
}

interface Managed {
  spec: ProcessSpec
  child: ChildProcess
  exited: Promise<number | null>
  startedAt: number
  /** Delay before the next restart, doubled by each quick crash. */
  nextDelayMs: number
  restartTimer?: NodeJS.Timeout
  /** Stopped on purpose: no restart. */
  stopped: boolean
}

/** Next restart delay: doubled after a short run, back to the start after a long one. */
export function nextRestartDelay(policy: RestartPolicy, previousDelayMs: number, ranForMs: number): number {
  if (ranForMs >= policy.resetAfterMs) return policy.initialDelayMs
  return Math.min(policy.maxDelayMs, Math.max(policy.initialDelayMs, previousDelayMs * 2))
}

/**
 * Starts the platform's processes, each in its own process group (so a signal reaches its
 * children too), with output to a log file; restarts those that die on their own when given a
 * restart policy; stops them all in reverse order, SIGTERM first and SIGKILL after a grace
 * period, leaving no orphans.
 */
export class Supervisor {
  private readonly procs: Managed[] = []
  private stopping = false
  private readonly opts: SupervisorOptions

  constructor(opts: SupervisorOptions | ((name: string, code: number | null, restartInMs?: number) => void) = {}) {
    this.opts = typeof opts === 'function' ? { onUnexpectedExit: opts } : opts
  }

  start(spec: ProcessSpec): ChildProcess {
    const m = {} as Managed
    m.spec = spec
    m.stopped = false
    m.nextDelayMs = 0
    this.spawnInto(m)
    this.procs.push(m)
    return m.child
  }

  /** The running child of a process by name (it changes with every restart). */
  current(name: string): ChildProcess | undefined {
    return this.procs.find((p) => p.spec.name === name)?.child
  }

  private spawnInto(m: Managed): void {
    const spec = m.spec
    mkdirSync(dirname(spec.logFile), { recursive: true })
    const options = {
      cwd: spec.cwd,
      // Inherit the caller's environment (NODE_EXTRA_CA_CERTS, proxies, ...), then our settings.
      env: { ...process.env, ...spec.env },
      detached: true,
    }
    let child: ChildProcess
    /** Notes in the log that the process never ran (no output to wait for). */
    let neverRan: (message: string) => void
    if (!spec.echo) {
      // The process writes its log file itself. Through a pipe, its output waits on this
      // process's event loop: a synchronous call here (a test set-up's `helm install --wait`, an
      // image import) stopped draining it, the pipe filled, and the process (a kubelet, say)
      // stopped at its next log line until the call ended. What it started and left behind
      // (PostgreSQL's backends, after a SIGKILLed postmaster) writes on into the same file.
      const fd = openSync(spec.logFile, 'a')
      try {
        child = spawn(spec.command, spec.args, { ...options, stdio: ['ignore', fd, fd] })
      } finally {
        closeSync(fd)
      }
      neverRan = (message) => appendFileSync(spec.logFile, `failed to start: ${message}\n`)
    } else {
      const log = createWriteStream(spec.logFile, { flags: 'a' })
      // A log that cannot be written must not bring the supervisor (the test run) down.
      log.on('error', () => {})
      child = spawn(spec.command, spec.args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
      const echo = spec.echo
      const forward = (chunk: Buffer) => {
        if (!log.writableEnded) log.write(chunk)
        for (const line of chunk.toString().split('\n')) if (line) echo.write(`[${spec.name}] ${line}\n`)
      }
      child.stdout!.on('data', forward)
      child.stderr!.on('data', forward)
      // The log ends when the output does, not when the process exits: what the process started
      // can outlive it and still hold its stdout. (PostgreSQL's backends leave their own process
      // groups and write on after a SIGKILLed postmaster; writing those lines to a log already
      // ended threw in the test run's main process, which then exited at once with code 1.)
      child.once('close', () => log.end())
      neverRan = (message) => {
        if (!log.writableEnded) log.end(`failed to start: ${message}\n`)
      }
    }
    m.child = child
    m.startedAt = Date.now()
    m.exited = new Promise<number | null>((resolve) => {
      let done = false
      const finish = (code: number | null) => {
        if (done) return
        done = true
        // Whatever the process left in its group goes with it.
        signalGroup(child, 'SIGKILL', true)
        if (!this.stopping && !m.stopped) this.unexpectedExit(m, code)
        resolve(code)
      }
      child.on('exit', (code, signal) => finish(code ?? (signal ? 128 + signalNumber(signal) : null)))
      child.on('error', (err) => {
        neverRan(err.message)
        finish(null)
      })
    })
    spec.onStart?.(child)
  }

  private unexpectedExit(m: Managed, code: number | null): void {
    const policy = this.opts.restart
    if (!policy) return this.opts.onUnexpectedExit?.(m.spec.name, code)
    m.nextDelayMs = nextRestartDelay(policy, m.nextDelayMs, Date.now() - m.startedAt)
    this.opts.onUnexpectedExit?.(m.spec.name, code, m.nextDelayMs)
    m.restartTimer = setTimeout(() => {
      m.restartTimer = undefined
      if (!this.stopping && !m.stopped) this.spawnInto(m)
    }, m.nextDelayMs)
  }

  /** Stops one process by name (and forgets it), e.g. to restart it in a test. */
  async stopOne(name: string, graceMs = 10_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const i = this.procs.findIndex((p) => p.spec.name === name)
    if (i < 0) return
    const [p] = this.procs.splice(i, 1)
    await stopProcess(p, graceMs, signal)
  }

  async stopAll(graceMs = 10_000): Promise<void> {
    this.stopping = true
    for (const p of [...this.procs].reverse()) await stopProcess(p, graceMs, 'SIGTERM')
    this.procs.length = 0
  }

  /** Synchronous last resort (process 'exit' handler): kill every group at once. */
  killAllNow(): void {
    for (const p of this.procs) {
      clearTimeout(p.restartTimer)
      signalGroup(p.child, 'SIGKILL')
    }
  }
}

function signalNumber(signal: NodeJS.Signals): number {
  return osConstants.signals[signal] ?? 0
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals, evenIfExited = false): void {
  if (child.pid === undefined) return
  if (!evenIfExited && (child.exitCode !== null || child.signalCode !== null)) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // Already gone.
  }
}

async function stopProcess(p: Managed, graceMs: number, signal: NodeJS.Signals): Promise<void> {
  p.stopped = true
  clearTimeout(p.restartTimer)
  signalGroup(p.child, signal)
  const timer = setTimeout(() => signalGroup(p.child, 'SIGKILL'), graceMs)
  await p.exited
  clearTimeout(timer)
  // The leader is gone; make sure nothing it started lingers in its group.
  signalGroup(p.child, 'SIGKILL', true)
}
