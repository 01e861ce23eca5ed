import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join, normalize, sep } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import {
  DutilClient,
  DutilError,
  type Job,
  JobFailedError,
  type JobStatus,
  type JobSummary,
  type Upload,
  type Utility,
  WaitTimeoutError,
} from '../clients/typescript/src/index.js'
import { JOB_STATES } from '../contract/crd-schemas.js'
import { CONTRACT_SLUGS } from '../contract/utility.js'
import { age, alignedTable, renderList, renderOne, type Column, type OutputFormat } from './output.js'
import { verboseFetch } from './verbose.js'
import { UsageError } from './usage-error.js'
import { uploadProgress } from './progress.js'

/**
 * `dutil run` and `dutil jobs`: the API from a shell, through the typed client
 * (clients/typescript). Exit codes tell a script what happened.
 */
export const EXIT = {
  ok: 0,
  /** The job ran and failed (or was cancelled). */
  jobFailed: 1,
  usage: 2,
  /** The API refused the request (the error envelope: 400, 401, 403, 404, 409, 429, 500). */
  refused: 3,
  /** Nothing answered at the API's URL. */
  unreachable: 4,
  /** --timeout passed while waiting; the job goes on. */
  timedOut: 5,
} as const

/** The client for the API settings of the environment or the config file's context (cli/config-file.ts). */
export function clientFor(
  settings: { url: string; apiKey: string | undefined },
  o: { verbose?: (line: string) => void } = {},
): DutilClient {
  if (!settings.apiKey)
    throw new UsageError(
      'no API key: set DUTIL_API_KEY, or store one in a context (dutil config set-context NAME --api-key du_live_...); `dutil keys create` makes one',
    )
  return new DutilClient({
    baseUrl: settings.url,
    apiKey: settings.apiKey,
    ...(o.verbose ? { fetch: verboseFetch(o.verbose) } : {}),
  })
}

export interface Io {
  out: (text: string) => void
  err: NodeJS.WriteStream
}

const stdio: Io = { out: (text) => console.log(text), err: process.stderr }

function json(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw)
  } catch {
    throw new UsageError(`${what} is not valid JSON`)
  }
}

/** The job's input from the flags: --input / --input-file as given, or --url (several for zip-files). */
export function inputFrom(
  utility: string,
  v: { url?: string[]; input?: string; 'input-file'?: string },
): Record<string, unknown> {
  const given = [
    v.url?.length ? '--url' : null,
    v.input ? '--input' : null,
    v['input-file'] ? '--input-file' : null,
  ].filter(Boolean)
  if (given.length !== 1)
    throw new UsageError(
      `run needs exactly one of --url, --input or --input-file (got ${given.length ? given.join(', ') : 'none'})`,
    )
  if (v.input) return json(v.input, '--input') as Record<string, unknown>
  if (v['input-file']) return json(readFileSync(v['input-file'], 'utf8'), v['input-file']) as Record<string, unknown>
  const urls = v.url!
  if (utility === 'zip-files')
    return {
      files: urls.map((url) => ({
        url,
        fileName: decodeURIComponent(new URL(url).pathname.split('/').pop() || 'file'),
      })),
    }
  if (utility === 'merge-pdf') {
    if (urls.length < 2) throw new UsageError('merge-pdf takes two or more --url, in the order to merge')
    return { files: urls.map((url) => ({ url })) }
  }
  if (urls.length > 1) throw new UsageError(`${utility} takes one --url`)
  return { url: urls[0] }
}

/** One line about a job in progress: "job_… running 12.3s 120/500 pages". */
export function progressLine(job: Job, startedAt: number, now: number): string {
  const p = job.progress
  const done = p ? ` ${p.total === null ? p.done : `${p.done}/${p.total}`} ${p.unit}` : ''
  return `${job.id} ${job.status} ${((now - startedAt) / 1000).toFixed(1)}s${done}`
}

/** A file's place under --out: its path inside an unzipped archive, or its name; never outside DIR. */
export function outputPath(dir: string, file: { name: string; path?: string }): string {
  const rel = normalize(file.path || file.name).replace(/^([/\\])+/, '')
  if (rel === '..' || rel.startsWith(`..${sep}`) || rel.includes(`${sep}..${sep}`))
    throw new Error(`refusing to write ${JSON.stringify(file.path || file.name)} outside ${dir}`)
  return join(dir, rel)
}

async function download(job: Job, dir: string, io: Io): Promise<void> {
  for (const f of job.result?.files ?? []) {
    const target = outputPath(dir, f)
    mkdirSync(dirname(target), { recursive: true })
    const res = await fetch(f.url)
    if (!res.ok || !res.body) throw new DutilError(`downloading ${f.name} failed: HTTP ${res.status}`, 'download')
    await pipeline(Readable.fromWeb(res.body as never), createWriteStream(target))
    io.err.write(`saved ${target}\n`)
  }
}

function summary(job: Job): string {
  const files = job.result?.files.length ?? 0
  if (job.status === 'succeeded')
    return `${job.id} succeeded in ${job.timings.totalMs} ms: ${files === 1 ? '1 file' : `${files} files`}`
  if (job.status === 'failed') return `${job.id} failed: ${job.error?.code}: ${job.error?.message}`
  return `${job.id} ${job.status}`
}

async function follow(
  c: DutilClient,
  id: string,
  v: { timeout?: string; out?: string },
  format: OutputFormat,
  io: Io,
): Promise<number> {
  const t0 = Date.now()
  const tty = io.err.isTTY
  let last = ''
  const timeoutMs = v.timeout === undefined ? undefined : Number(v.timeout) * 1000
  if (timeoutMs !== undefined && !(timeoutMs > 0))
    throw new UsageError('--timeout must be a positive number of seconds')
  const show = (job: Job) => {
    const line = progressLine(job, t0, Date.now())
    if (tty) io.err.write(`\r${line}\x1b[K`)
    else if (line.replace(/ \d+\.\ds/, '') !== last.replace(/ \d+\.\ds/, '')) io.err.write(`${line}\n`)
    last = line
  }
  // A ticking elapsed time on a terminal, between the long-polls.
  let current: Job | undefined
  const ticker = tty ? setInterval(() => current && show(current), 500) : undefined
  try {
    // Short polls, so the progress line moves while the runner works (one request every 2 s).
    const job = await c.wait(id, { timeoutMs, pollSeconds: 2, onUpdate: (j) => show((current = j)) })
    if (tty) io.err.write('\n')
    if (v.out) await download(job, v.out, io)
    io.out(renderOne(format, job, () => summary(job)))
    return EXIT.ok
  } catch (err) {
    if (tty) io.err.write('\n')
    if (err instanceof JobFailedError) {
      io.out(renderOne(format, err.job, () => summary(err.job)))
      return EXIT.jobFailed
    }
    if (err instanceof WaitTimeoutError) {
      const job = err.job
      io.out(
        renderOne(
          format,
          job,
          () => `${job.id} is still ${job.status} after ${v.timeout} s; it goes on (dutil jobs wait ${job.id})`,
        ),
      )
      return EXIT.timedOut
    }
    throw err
  } finally {
    clearInterval(ticker)
  }
}

export interface RunOptions {
  /** Positional inputs: local paths are uploaded first; URLs stay URLs. */
  files?: string[]
  url?: string[]
  input?: string
  inputFile?: string
  metadata?: string
  callbackUrl?: string
  wait?: boolean
  out?: string
  timeout?: string
}

/** `dutil run UTILITY`: starts a job; with --wait or --out follows it to the end. */
export async function runUtility(
  c: DutilClient,
  utility: string,
  v: RunOptions,
  format: OutputFormat,
  io: Io = stdio,
): Promise<number> {
  if (!(CONTRACT_SLUGS as readonly string[]).includes(utility))
    throw new UsageError(`unknown utility ${JSON.stringify(utility)} (known: ${CONTRACT_SLUGS.join(', ')})`)
  if (v.files?.length && v.url?.length)
    throw new UsageError('give the input as files (and --input or --input-file for its options), or as --url, not both')
  // Local files become uploads of this key's own; their s3:// names are the input URLs, and
  // --input or --input-file beside them gives the rest of the input (edit-pdf's edits, a password).
  const rest = v.files?.length ? optionsBesideFiles(v) : undefined
  const urls = v.files?.length ? await Promise.all(v.files.map((f) => inputUrlOf(c, f, io))) : v.url
  const input = rest
    ? { ...rest, ...inputFrom(utility, { url: urls }) }
    : inputFrom(utility, { url: urls, input: v.input, 'input-file': v.inputFile })
  const metadata = v.metadata ? (json(v.metadata, '--metadata') as Record<string, unknown>) : undefined
  const job = await c.submit(utility as Utility, input as never, { metadata, callbackUrl: v.callbackUrl })
  if (!v.wait && !v.out) {
    io.out(renderOne(format, job, () => `${job.id} ${job.status} (dutil jobs wait ${job.id})`))
    return EXIT.ok
  }
  return follow(c, job.id, v, format, io)
}

/**
 * The rest of the input beside local files: --input, or --input-file (which keeps a password off
 * the command line, its history and `ps`), not both; none when neither is given.
 */
export function optionsBesideFiles(v: Pick<RunOptions, 'input' | 'inputFile'>): Record<string, unknown> | undefined {
  if (v.input && v.inputFile) throw new UsageError('give the options beside files as --input or --input-file, not both')
  if (v.input) return json(v.input, '--input') as Record<string, unknown>
  if (v.inputFile) return json(readFileSync(v.inputFile, 'utf8'), v.inputFile) as Record<string, unknown>
  return undefined
}

/** A positional input: a URL as it is, a local file uploaded (a line on stderr says so). */
async function inputUrlOf(c: DutilClient, arg: string, io: Io): Promise<string> {
  if (/^(https?|s3):\/\//i.test(arg)) return arg
  if (!existsSync(arg)) throw new UsageError(`${arg}: no such file (a URL starts with http://, https:// or s3://)`)
  const file = await c.uploadFile(arg, { onProgress: uploadProgress(io.err, basename(arg)) })
  io.err.write(`uploaded ${arg} (${sizeText(file.size)}) as ${file.id}\n`)
  return file.url
}

const sizeText = (n: number) =>
  n >= 1024 ** 2 ? `${(n / 1024 ** 2).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`

const FILE_COLUMNS: Array<Column<Upload>> = [
  { header: 'ID', value: (f) => f.id },
  { header: 'NAME', value: (f) => f.name },
  { header: 'SIZE', value: (f) => sizeText(f.size) },
  { header: 'TYPE', value: (f) => f.contentType, wide: true },
  { header: 'URL', value: (f) => f.url, wide: true },
  { header: 'EXPIRES', value: (f) => f.expiresAt },
]

/** `dutil files upload PATH`: uploads a local file; prints it (its url is the s3:// input name). */
export async function uploadFile(
  c: DutilClient,
  path: string,
  v: { name?: string; expiresIn?: string },
  format: OutputFormat,
  io: Io = stdio,
): Promise<number> {
  if (!existsSync(path)) throw new UsageError(`${path}: no such file`)
  const expires = v.expiresIn === undefined ? undefined : Number(v.expiresIn)
  if (expires !== undefined && !Number.isInteger(expires))
    throw new UsageError('--expires-in must be a whole number of seconds')
  const file = await c.uploadFile(path, {
    name: v.name,
    expiresInSeconds: expires,
    onProgress: uploadProgress(io.err, basename(path)),
  })
  io.out(renderOne(format, file, () => `${file.id} ${file.name} ${sizeText(file.size)} ${file.url}`))
  return EXIT.ok
}

/** `dutil files list`: the key's unexpired uploads. */
export async function listFiles(c: DutilClient, format: OutputFormat, io: Io = stdio): Promise<number> {
  const files: Upload[] = []
  for await (const f of c.files()) files.push(f)
  io.out(renderList(format, files, FILE_COLUMNS))
  return EXIT.ok
}

/** `dutil files delete ID`. */
export async function deleteFile(c: DutilClient, id: string, io: Io = stdio): Promise<number> {
  await c.deleteFile(id)
  io.out(`${id} deleted`)
  return EXIT.ok
}

const JOB_COLUMNS: Array<Column<JobSummary>> = [
  { header: 'ID', value: (j) => j.id },
  { header: 'UTILITY', value: (j) => j.utility },
  { header: 'MODE', value: (j) => j.mode },
  { header: 'STATUS', value: (j) => j.status },
  { header: 'ERROR', value: (j) => j.errorCode ?? '-' },
  { header: 'FILES', value: (j) => j.fileCount, wide: true },
  { header: 'TOTAL-MS', value: (j) => j.totalMs, wide: true },
  { header: 'SOURCE', value: (j) => j.source, wide: true },
  { header: 'KEY', value: (j) => j.apiKeyName, wide: true },
  { header: 'CREATED', value: (j) => j.createdAt, wide: true },
  { header: 'AGE', value: (j) => age(j.createdAt) },
]

/** `dutil jobs list`: the key's newest jobs (--limit, default 25), following pages as needed. */
export async function listJobs(
  c: DutilClient,
  v: { utility?: string; status?: string; limit?: string },
  format: OutputFormat,
  io: Io = stdio,
): Promise<number> {
  if (v.status && !(JOB_STATES as readonly string[]).includes(v.status))
    throw new UsageError(`--status must be one of ${JOB_STATES.join(', ')}`)
  if (v.utility && !(CONTRACT_SLUGS as readonly string[]).includes(v.utility))
    throw new UsageError(`--utility must be one of ${CONTRACT_SLUGS.join(', ')}`)
  const limit = v.limit === undefined ? 25 : Number(v.limit)
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive whole number')
  const jobs: JobSummary[] = []
  for await (const j of c.list({
    utility: v.utility as Utility | undefined,
    status: v.status as JobStatus | undefined,
    pageSize: Math.min(limit, 100),
  })) {
    jobs.push(j)
    if (jobs.length >= limit) break
  }
  io.out(renderList(format, jobs, JOB_COLUMNS))
  return EXIT.ok
}

/** `dutil jobs get JOB_ID`: one row (wide: with its time and creation), or the job as JSON/YAML. */
export async function getJob(c: DutilClient, id: string, format: OutputFormat, io: Io = stdio): Promise<number> {
  const job = await c.get(id)
  const p = job.progress
  const progress = p ? `${p.done}${p.total === null ? '' : `/${p.total}`} ${p.unit}` : '-'
  const wide = format === 'wide'
  io.out(
    renderOne(format, job, () =>
      alignedTable([
        [
          'ID',
          'UTILITY',
          'MODE',
          'STATUS',
          'PROGRESS',
          'ERROR',
          'FILES',
          ...(wide ? ['TOTAL-MS', 'CREATED'] : []),
          'AGE',
        ],
        [
          job.id,
          job.utility,
          job.mode,
          job.status,
          progress,
          job.error?.code ?? '-',
          String(job.result?.files.length ?? 0),
          ...(wide ? [String(job.timings.totalMs ?? '-'), job.createdAt] : []),
          age(job.createdAt),
        ],
      ]),
    ),
  )
  return EXIT.ok
}

export function waitJob(
  c: DutilClient,
  id: string,
  v: { out?: string; timeout?: string },
  format: OutputFormat,
  io: Io = stdio,
): Promise<number> {
  return follow(c, id, v, format, io)
}

export async function cancelJob(c: DutilClient, id: string, format: OutputFormat, io: Io = stdio): Promise<number> {
  const job = await c.cancel(id)
  io.out(renderOne(format, job, () => `${job.id} ${job.status}`))
  return EXIT.ok
}
