import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Pid files of the platform's components (`<dir>/pids/<name>.pid`), holding the pid and the
 * process's start time (field 22 of /proc/<pid>/stat, in clock ticks since boot).
 *
 * A pid alone is not an identity: this machine wraps its pid space (pid_max 32768) within
 * minutes of a test run, so the pid of a component that exited long ago soon belongs to another
 * process, or leads another process group, perhaps one of the other test tier running beside
 * this one. A kill through a stale pid file hit whatever had the number then. With the start
 * time, a pid file names one process only: once that process is gone it names none.
 */

/** The start time of a process, or undefined when there is no such process (or it is a zombie). */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces and parentheses): state is field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (fields[0] === 'Z') return undefined
    return fields[19]
  } catch {
    return undefined
  }
}

export const pidFile = (dir: string, name: string) => join(dir, 'pids', `${name}.pid`)

/** Records a process just started (its pid and start time) as `name`'s. */
export function writePidFile(dir: string, name: string, pid: number): void {
  writeFileSync(pidFile(dir, name), `${pid} ${processStartTime(pid) ?? ''}`.trim())
}

/**
 * The pid of `name`'s process while that very process runs; undefined once it has exited, even
 * when its pid now belongs to another process. Also undefined without a pid file.
 */
export function livePid(dir: string, name: string): number | undefined {
  let text: string
  try {
    text = readFileSync(pidFile(dir, name), 'utf8')
  } catch {
    return undefined
  }
  return liveFromRecord(text)
}

/** The pid a pid file's text names while its process runs (see livePid). */
export function liveFromRecord(text: string): number | undefined {
  const [pidText, started] = text.trim().split(' ')
  const pid = Number(pidText)
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  const now = processStartTime(pid)
  if (now === undefined) return undefined
  // A process that exited before its start time could be read leaves no start time: it is gone.
  return started !== undefined && now === started ? pid : undefined
}

/** Signals `name`'s process group (the component and what it started) while it runs; false when it does not. */
export function signalComponentGroup(dir: string, name: string, signal: NodeJS.Signals): boolean {
  const pid = livePid(dir, name)
  if (pid === undefined) return false
  try {
    process.kill(-pid, signal)
    return true
  } catch {
    return false
  }
}
