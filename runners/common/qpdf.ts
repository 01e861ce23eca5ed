import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseBoundedJson } from '../../platform/bounded-json.js'
import { runBoundedChild } from './bounded-child.js'
import { rejected, RunnerError } from './runner-error.js'

export const QPDF = process.env.DUTIL_QPDF_PATH || '/usr/bin/qpdf'

/** qpdf's environment: nothing of the runner's (its storage credentials, a pool's token). */
const QPDF_ENV = ['LANG', 'LC_ALL', 'TZ'] as const

/** qpdf could not open the document: it needs a password to be read (or the one given is not its). */
export class PasswordRequired extends RunnerError {
  constructor() {
    super('upstream_rejected', 'The PDF is protected by a password: give it in `password`.')
  }
}

/**
 * The file in `dir` (the job's scratch space) that hands qpdf the password opening a protected
 * document (`--password-file`), so it is never on qpdf's command line; none without a password.
 */
export async function passwordFile(dir: string, password: string | undefined): Promise<string | undefined> {
  if (password === undefined) return undefined
  const file = join(dir, 'password')
  await writeFile(file, password, { mode: 0o600 })
  return file
}

/**
 * `work`, run on a document opened with `password` (when one was given): qpdf's refusal of it
 * says the password is wrong rather than missing.
 */
export async function openedWith<T>(password: string | undefined, work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (err) {
    if (err instanceof PasswordRequired && password !== undefined)
      throw rejected('The password given does not open the PDF.')
    throw err
  }
}

export interface QpdfRun {
  /** Its standard output, within `maxOutputBytes`. */
  stdout: Buffer
  /** Its exit code: 0, or one of the run's `exitCodes`. */
  code: number
}

/**
 * Runs qpdf once in `cwd` (its TMPDIR too), within a time limit and a bound on what it may print.
 * A document qpdf cannot read, or one protected by a password, is the input's fault
 * (upstream_rejected); qpdf killed or past its time is upstream_error / rejected with a reason.
 */
export async function runQpdf(
  args: string[],
  o: { cwd: string; timeoutMs: number; maxOutputBytes: number; exitCodes?: number[] },
): Promise<QpdfRun> {
  const run = await runBoundedChild(QPDF, args, { ...o, env: QPDF_ENV })
  const { code, signal } = run
  if (run.timedOut)
    throw rejected(`qpdf did not finish its work on the PDF within ${Math.round(o.timeoutMs / 1000)} s.`)
  if (run.overflow) throw rejected('The PDF is too intricate to describe (its structure passes the size dutil reads).')
  if (code === 0 || (code !== null && o.exitCodes?.includes(code))) return { stdout: run.stdout, code }
  if (/invalid password|password/i.test(run.stderr)) throw new PasswordRequired()
  if (code === 2) throw rejected(`The file is not a PDF qpdf can read (${qpdfReason(run.stderr)}).`)
  throw new RunnerError('upstream_error', `qpdf stopped while working on the PDF (${signal ?? `exit ${code}`}).`)
}

/** qpdf's own reason (its fatal line, not its warnings), without the file names of the job's scratch space. */
export function qpdfReason(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  const fatal = lines.find((l) => l.startsWith('qpdf:')) ?? lines.at(-1) ?? 'no reason given'
  return fatal
    .replace(/^qpdf:\s*/, '')
    .replace(/\S*\binput\.pdf(\s*\([^)]*\))?:?\s*/g, '')
    .slice(0, 200)
}

/** Whether the PDF needs a password to be opened (qpdf --requires-password: 0 yes, 2 not encrypted, 3 no). */
export async function requiresPassword(
  file: string,
  o: { cwd: string; timeoutMs: number; maxOutputBytes: number },
): Promise<boolean> {
  return (await runQpdf(['--requires-password', file], { ...o, exitCodes: [2, 3] })).code === 0
}

/**
 * qpdf's JSON description of `file` (`--json=2` and `args`, such as `--json-key=…`). A hostile
 * document's description is as hostile: its size is bounded as qpdf writes it, its nesting here.
 */
export async function describePdf(
  file: string,
  args: string[],
  o: { cwd: string; timeoutMs: number; maxOutputBytes: number },
): Promise<unknown> {
  const report = (await runQpdf(['--json=2', ...args, file], o)).stdout.toString('utf8')
  try {
    return parseBoundedJson(report, 64)
  } catch {
    throw rejected('The PDF is too intricate to describe (its structure nests deeper than dutil reads).')
  }
}
