import type { ChildProcess } from 'node:child_process'

/**
 * Programs a runner starts in process groups of their own (LibreOffice, Chromium: `detached`, so
 * that one kill takes everything they started) must not outlive the runner. A group registered
 * here is killed when the runner exits, and when the runner is told to stop (SIGTERM at its
 * deadline or at its pod's deletion, SIGINT) while no other handler owns the stop: a pool program
 * drains first and exits, and the exit kills the groups. Without this a runner stopped by a
 * signal ended at once and left a LibreOffice busy converting to run on (outside a container's
 * PID namespace: the dev node agent, a runner run by hand).
 */
const groups = new Set<number>()
let installed = false

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

function killAll(): void {
  for (const pid of groups) killGroup(pid)
  groups.clear()
}

function install(): void {
  if (installed) return
  installed = true
  process.once('exit', killAll)
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    process.on(signal, () => {
      // Another handler stops the program (and its exit kills the groups).
      if (process.listenerCount(signal) > 1) return
      killAll()
      process.exit(code)
    })
  }
}

/**
 * Kills the process group of `child` (started with `detached: true`) when the runner ends, and
 * what is left of the group when the child itself exits (a renderer, a LibreOffice its converter
 * left behind).
 */
export function killWithRunner(child: ChildProcess): void {
  const pid = child.pid
  if (pid === undefined) return
  install()
  groups.add(pid)
  child.once('exit', () => {
    killGroup(pid)
    groups.delete(pid)
  })
}
