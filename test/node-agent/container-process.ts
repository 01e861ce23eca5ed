// One container as a host process: `unshare --mount --propagation private -- /bin/bash -c <mount
// script> sh <argv...>` in its own process group (detached), stdout+stderr appended to a log
// file. The group is what gets signalled, so shells and their children go together.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { constants as osConstants } from 'node:os'

export interface ContainerProcessSpec {
  script: string
  argv: readonly string[]
  env: NodeJS.ProcessEnv
  logPath: string
}

export interface ProcessExit {
  exitCode: number
  /** Signal number when the process was killed by a signal. */
  signal?: number
  /** Set when the process could not be started at all. */
  spawnError?: string
}

export interface ContainerProcess {
  readonly pid: number | undefined
  readonly exited: Promise<ProcessExit>
  /** Signals the whole process group; a no-op once it is gone. */
  signal(sig: NodeJS.Signals): void
}

export function signalNumber(sig: NodeJS.Signals): number {
  return osConstants.signals[sig] ?? 0
}

/** kubelet/CRI convention: a process killed by signal N reports exit code 128+N. */
export function exitFromWait(code: number | null, sig: NodeJS.Signals | null): ProcessExit {
  if (code !== null) return { exitCode: code }
  const n = sig ? signalNumber(sig) : 0
  return { exitCode: 128 + n, signal: n }
}

export function signalGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (!pid) return
  try {
    process.kill(-pid, sig)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err
  }
}

// bash, not sh: the mount script holds more open descriptors than dash's single-digit ones.
export const UNSHARE_ARGS = ['--mount', '--propagation', 'private', '--', '/bin/bash', '-c']

export function startContainerProcess(spec: ContainerProcessSpec): ContainerProcess {
  const fd = fs.openSync(spec.logPath, 'a')
  let pid: number | undefined
  const exited = new Promise<ProcessExit>((resolve) => {
    try {
      const child = spawn('unshare', [...UNSHARE_ARGS, spec.script, 'sh', ...spec.argv], {
        cwd: '/',
        env: spec.env,
        detached: true,
        stdio: ['ignore', fd, fd],
      })
      pid = child.pid
      child.once('error', (err) => resolve({ exitCode: 128, spawnError: err.message }))
      child.once('exit', (code, sig) => {
        // Whatever the main process left behind in its group goes with it (as with a PID namespace).
        signalGroup(child.pid, 'SIGKILL')
        resolve(exitFromWait(code, sig))
      })
    } catch (err) {
      resolve({ exitCode: 128, spawnError: err instanceof Error ? err.message : String(err) })
    } finally {
      fs.closeSync(fd)
    }
  })
  return {
    get pid() {
      return pid
    },
    exited,
    signal: (sig) => signalGroup(pid, sig),
  }
}
