import { spawn } from 'node:child_process'
import { allowedEnv } from './child-env.js'
import { killWithRunner } from './child-groups.js'

export interface BoundedChildOptions {
  /** Its working directory, and its TMPDIR: the job's scratch space. */
  cwd: string
  /** The variables of the runner's environment it gets (child-env.ts): never the runner's secrets. */
  env: readonly string[]
  timeoutMs: number
  /** What it may print on its standard output; past it, it is killed. */
  maxOutputBytes: number
}

export interface BoundedChildRun {
  /** Its standard output, within maxOutputBytes. */
  stdout: Buffer
  /** The first 64 KB of its standard error. */
  stderr: string
  code: number | null
  signal: NodeJS.Signals | null
  /** Killed at its time limit. */
  timedOut: boolean
  /** Killed for printing more than it may. */
  overflow: boolean
}

/**
 * Runs a program a runner uses on a document (qpdf, Ghostscript) once: in a process group of its
 * own that dies with the runner, with only the environment named, within a time limit and a
 * bound on what it prints. The caller reads its outcome; nothing here decides what a code means.
 */
export async function runBoundedChild(
  program: string,
  args: string[],
  o: BoundedChildOptions,
): Promise<BoundedChildRun> {
  const child = spawn(program, args, {
    cwd: o.cwd,
    env: { ...allowedEnv(o.env), TMPDIR: o.cwd },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  killWithRunner(child)
  const out: Buffer[] = []
  let outBytes = 0
  let stderr = ''
  let overflow = false
  child.stdout.on('data', (c: Buffer) => {
    outBytes += c.length
    if (outBytes > o.maxOutputBytes) {
      overflow = true
      child.kill('SIGKILL')
    } else out.push(c)
  })
  child.stderr.on('data', (c: Buffer) => {
    if (stderr.length < 64 * 1024) stderr += c.toString('utf8')
  })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    child.kill('SIGKILL')
  }, o.timeoutMs)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (c, s) => resolve([c, s]))
  }).finally(() => clearTimeout(timer))
  return { stdout: Buffer.concat(out), stderr, code, signal, timedOut, overflow }
}
