import { createWriteStream, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, sep } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import {
  DutilClient,
  DutilConnectionError,
  DutilError,
  DutilRequestError,
  type Job,
  JobFailedError,
  type JobStatus,
  type Utility,
  WaitTimeoutError,
} from '../clients/typescript/src/index.js'
import { JOB_STATES } from '../contract/crd-schemas.js'

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
  /** Nothing answered at DUTIL_URL. */
  unreachable: 4,
  /** --timeout passed while waiting; the job goes on. */
  timedOut: 5,
} as const

export const API_USAGE = `  run UTILITY (--url URL ... | --input JSON | --input-file FILE) [--metadata JSON] [--wait] [--out DIR] [--timeout S] [--json]
      starts a job; --wait follows it to the end (progress on stderr), --out downloads its files
  jobs list [--utility U] [--status S] [--limit N] [--json]
  jobs get JOB_ID [--json]
  jobs wait JOB_ID [--out DIR] [--timeout S] [--json]
  jobs cancel JOB_ID [--json]

  run and jobs call the API at DUTIL_URL (default http://127.0.0.1:8080) with DUTIL_API_KEY.
  Exit codes: 0 succeeded, 1 the job failed or was cancelled, 2 usage, 3 refused by the API,
  4 API unreachable, 5 --timeout passed while waiting.`

export class ApiUsageError extends Error {}

interface Io {
  out: (line: string) => void
  err: NodeJS.WriteStream
}

function client(): DutilClient {
  const apiKey = process.env.DUTIL_API_KEY
  if (!apiKey) throw new ApiUsageError('set DUTIL_API_KEY to an API key (du_live_...); `dutil keys create` makes one')
  return new DutilClient({ baseUrl: process.env.DUTIL_URL || 'http://127.0.0.1:8080', apiKey })
}

function json(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw)
  } catch {
    throw new ApiUsageError(`${what} is not valid JSON`)
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
    throw new ApiUsageError(
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
  if (urls.length > 1) throw new ApiUsageError(`${utility} takes one --url`)
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
  v: { timeout?: string; out?: string; json?: boolean },
  io: Io,
): Promise<number> {
  const t0 = Date.now()
  const tty = io.err.isTTY
  let last = ''
  const timeoutMs = v.timeout === undefined ? undefined : Number(v.timeout) * 1000
  if (timeoutMs !== undefined && !(timeoutMs > 0))
    throw new ApiUsageError('--timeout must be a positive number of seconds')
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
    io.out(v.json ? JSON.stringify(job) : summary(job))
    return EXIT.ok
  } catch (err) {
    if (tty) io.err.write('\n')
    if (err instanceof JobFailedError) {
      io.out(v.json ? JSON.stringify(err.job) : summary(err.job))
      return EXIT.jobFailed
    }
    if (err instanceof WaitTimeoutError) {
      io.out(
        v.json
          ? JSON.stringify(err.job)
          : `${err.job.id} is still ${err.job.status} after ${v.timeout} s; it goes on (dutil jobs wait ${err.job.id})`,
      )
      return EXIT.timedOut
    }
    throw err
  } finally {
    clearInterval(ticker)
  }
}

async function commands(group: 'run' | 'jobs', args: string[], io: Io): Promise<number> {
  const { values: v, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      url: { type: 'string', multiple: true },
      input: { type: 'string' },
      'input-file': { type: 'string' },
      metadata: { type: 'string' },
      wait: { type: 'boolean', default: false },
      out: { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean', default: false },
      utility: { type: 'string' },
      status: { type: 'string' },
      limit: { type: 'string' },
    },
  })
  const c = client()
  if (group === 'run') {
    const [utility] = positionals
    if (!utility)
      throw new ApiUsageError('run needs a utility: html-pdf, split-pdf, zip-files, unzip-files or xls-to-xlsx')
    const input = inputFrom(utility, v)
    const metadata = v.metadata ? (json(v.metadata, '--metadata') as Record<string, unknown>) : undefined
    const job = await c.submit(utility as Utility, input as never, { metadata })
    if (!v.wait && !v.out) {
      io.out(v.json ? JSON.stringify(job) : `${job.id} ${job.status} (dutil jobs wait ${job.id})`)
      return EXIT.ok
    }
    return follow(c, job.id, v, io)
  }
  const [command, id] = positionals
  const needId = () => {
    if (!id) throw new ApiUsageError(`jobs ${command} needs a job id (job_...)`)
    return id
  }
  switch (command) {
    case 'list': {
      if (v.status && !(JOB_STATES as readonly string[]).includes(v.status))
        throw new ApiUsageError(`--status must be one of ${JOB_STATES.join(', ')}`)
      const limit = v.limit === undefined ? 25 : Number(v.limit)
      if (!Number.isInteger(limit) || limit < 1) throw new ApiUsageError('--limit must be a positive whole number')
      const jobs = []
      for await (const j of c.list({
        utility: v.utility as Utility | undefined,
        status: v.status as JobStatus | undefined,
        pageSize: Math.min(limit, 100),
      })) {
        jobs.push(j)
        if (jobs.length >= limit) break
      }
      if (v.json) io.out(JSON.stringify(jobs))
      else {
        io.out(['ID', 'UTILITY', 'MODE', 'STATUS', 'ERROR', 'CREATED'].join('\t'))
        for (const j of jobs) io.out([j.id, j.utility, j.mode, j.status, j.errorCode ?? '-', j.createdAt].join('\t'))
      }
      return EXIT.ok
    }
    case 'get': {
      const job = await c.get(needId())
      io.out(
        v.json
          ? JSON.stringify(job)
          : `${summary(job)}${job.progress ? ` (${job.progress.done}${job.progress.total === null ? '' : `/${job.progress.total}`} ${job.progress.unit})` : ''}`,
      )
      return EXIT.ok
    }
    case 'wait':
      return follow(c, needId(), v, io)
    case 'cancel': {
      const job = await c.cancel(needId())
      io.out(v.json ? JSON.stringify(job) : `${job.id} ${job.status}`)
      return EXIT.ok
    }
    default:
      throw new ApiUsageError(`usage:\n${API_USAGE}`)
  }
}

/** Runs `dutil run|jobs …` and returns the exit code. */
export async function apiCommand(group: 'run' | 'jobs', args: string[]): Promise<number> {
  const io: Io = { out: (line) => console.log(line), err: process.stderr }
  try {
    return await commands(group, args, io)
  } catch (err) {
    if (err instanceof ApiUsageError) {
      console.error(err.message)
      return EXIT.usage
    }
    if (err instanceof DutilRequestError) {
      console.error(
        `dutil: refused (${err.status} ${err.code}): ${err.message}${err.details.length ? `\n${err.details.map((d) => `  ${d.path}: ${d.message}`).join('\n')}` : ''}${err.retryAfter !== null ? `\n  try again in ${err.retryAfter} s` : ''}`,
      )
      return EXIT.refused
    }
    if (err instanceof DutilConnectionError) {
      console.error(`dutil: ${err.message}`)
      return EXIT.unreachable
    }
    throw err
  }
}
