import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, mkdirSync } from 'node:fs'
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
}

interface Managed {
  spec: ProcessSpec
  child: ChildProcess
  exited: Promise<number | null>
}

/**
 * Starts the platform's processes, each in its own process group (so a signal reaches its
 * children too), with output to a log file; stops them all in reverse order, SIGTERM first and
 * SIGKILL after a grace period, leaving no orphans.
 */
export class Supervisor {
  private readonly procs: Managed[] = []
  private stopping = false

  constructor(private readonly onUnexpectedExit: (name: string, code: number | null) => void = () => {}) {}

  start(spec: ProcessSpec): ChildProcess {
    mkdirSync(dirname(spec.logFile), { recursive: true })
    const log = createWriteStream(spec.logFile, { flags: 'a' })
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      // Inherit the caller's environment (NODE_EXTRA_CA_CERTS, proxies, ...), then our settings.
      env: { ...process.env, ...spec.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const forward = (chunk: Buffer) => {
      log.write(chunk)
      if (spec.echo) for (const line of chunk.toString().split('\n')) if (line) spec.echo.write(`[${spec.name}] ${line}\n`)
    }
    child.stdout!.on('data', forward)
    child.stderr!.on('data', forward)
    const exited = new Promise<number | null>((resolve) => {
      child.on('exit', (code) => {
        log.end()
        if (!this.stopping) this.onUnexpectedExit(spec.name, code)
        resolve(code)
      })
      child.on('error', (err) => {
        log.write(`failed to start: ${err.message}\n`)
        resolve(null)
      })
    })
    this.procs.push({ spec, child, exited })
    return child
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
    for (const p of this.procs) signalGroup(p.child, 'SIGKILL')
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // Already gone.
  }
}

async function stopProcess(p: Managed, graceMs: number, signal: NodeJS.Signals): Promise<void> {
  signalGroup(p.child, signal)
  const timer = setTimeout(() => signalGroup(p.child, 'SIGKILL'), graceMs)
  await p.exited
  clearTimeout(timer)
  // The leader is gone; make sure nothing it started lingers in its group.
  signalGroup(p.child, 'SIGKILL')
  if (p.child.pid !== undefined) {
    try {
      process.kill(-p.child.pid, 'SIGKILL')
    } catch {
      // No process left in the group.
    }
  }
}
