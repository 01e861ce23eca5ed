import { readdirSync, readFileSync } from 'node:fs'

/**
 * Processes a pool runner did not start (docs/adr/0026-runner-pools.md): before each job the
 * runner looks at every process of its container, and a process that is neither the runner nor
 * one the runner keeps (html-pdf: its browser and that browser's children) was left behind by an
 * earlier job (a renderer that called setsid() and outlived its browser, a daemon a worker
 * forked). The pod then retires before another job runs.
 */

export interface ProcessEntry {
  pid: number
  ppid: number
  /** The command name (at most 15 characters, as the kernel keeps it). */
  command: string
  /** The kernel's state letter: R, S, D, … and Z for a zombie (ended, not yet reaped). */
  state?: string
}

/** Every process visible in `procRoot` (the container's own pid namespace). Bounded reads: a stat line is short. */
export function listProcesses(procRoot = '/proc'): ProcessEntry[] {
  const out: ProcessEntry[] = []
  for (const name of readdirSync(procRoot)) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try {
      stat = readFileSync(`${procRoot}/${name}/stat`, 'utf8').slice(0, 4096)
    } catch {
      continue // ended meanwhile
    }
    const entry = parseStat(stat)
    if (entry) out.push(entry)
  }
  return out
}

/** `pid (comm) state ppid …` (pure); the command may hold spaces and parentheses, so the last `)` ends it. */
export function parseStat(line: string): ProcessEntry | null {
  const open = line.indexOf('(')
  const close = line.lastIndexOf(')')
  if (open < 0 || close < open) return null
  const pid = Number(line.slice(0, open).trim())
  const [state, parent] = line.slice(close + 2).split(' ')
  const ppid = Number(parent)
  if (!Number.isInteger(pid) || !Number.isInteger(ppid)) return null
  return { pid, ppid, command: line.slice(open + 1, close), state }
}

/**
 * The processes that are neither `self` nor a descendant of a process in `kept` (pure). A
 * descendant of the runner that is not under a kept process was started by a job and outlived it.
 * A zombie is no stray: it has ended and runs nothing (the runner is its container's first
 * process, so an orphan that ends stays a zombie: LibreOffice's short-lived gpgconf queries do).
 */
export function strayProcesses(all: readonly ProcessEntry[], self: number, kept: readonly number[]): ProcessEntry[] {
  const children = new Map<number, number[]>()
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid])
  const allowed = new Set<number>([self])
  const stack = kept.filter((pid) => all.some((p) => p.pid === pid))
  while (stack.length) {
    const pid = stack.pop()!
    if (allowed.has(pid) && pid !== self) continue
    allowed.add(pid)
    for (const c of children.get(pid) ?? []) stack.push(c)
  }
  return all.filter((p) => !allowed.has(p.pid) && p.state !== 'Z')
}
