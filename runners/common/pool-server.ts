import { timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import pino, { type Logger } from 'pino'
import { POOL } from '../../contract/runner-protocol.js'
import { parseAssignment } from '../../platform/pool-protocol.js'
import {
  containerProcessCheck,
  loadPoolSettings,
  PoolRunner,
  type PoolSettings,
  type PoolWorker,
} from './pool-runner.js'
import { runJob, type RunContext, type UtilityOutcome } from './run-utility.js'

/** The pool runner's HTTP interface (POOL in contract/runner-protocol.ts) and a pool program's frame. */

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

function authorized(req: http.IncomingMessage, token: string): boolean {
  const got = Buffer.from(req.headers.authorization ?? '')
  const want = Buffer.from(`Bearer ${token}`)
  return got.length === want.length && timingSafeEqual(got, want)
}

const REFUSAL_STATUS = { busy: 409, tenant: 409, retired: 410, starting: 503 } as const

export function poolServer(runner: PoolRunner, settings: PoolSettings, log: Logger): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pool')
    if (req.method === 'GET' && url.pathname === '/healthz') {
      const h = runner.health()
      return json(res, h.ready ? 200 : 503, h)
    }
    if (!authorized(req, settings.token)) return json(res, 401, { error: 'unauthorized' })
    const m = /^\/jobs\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname)
    if (req.method === 'GET' && m) {
      const jobId = m[1]
      const wait = Number(url.searchParams.get('waitMs') ?? 0)
      const answer = () => {
        const s = runner.state(jobId)
        return s ? json(res, 200, s) : json(res, 404, { error: 'unknown job' })
      }
      if (!Number.isFinite(wait) || wait <= 0) return answer()
      // A long poll: the answer waits for the job's end (the operator's request may go first).
      void runner.untilEnded(jobId, Math.min(wait, POOL.maxWaitMs)).then(() => {
        if (!res.destroyed) answer()
      })
      return
    }
    if (req.method !== 'POST' || url.pathname !== '/jobs') return json(res, 404, { error: 'not found' })
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > POOL.maxAssignmentBytes) {
        json(res, 413, { error: 'assignment too large' })
        req.destroy()
        return
      }
      chunks.push(c)
    })
    req.on('end', () => {
      if (res.headersSent) return
      const a = parseAssignment(Buffer.concat(chunks).toString('utf8'))
      if (typeof a === 'string') {
        log.warn({ problem: a }, 'assignment refused')
        return json(res, 400, { error: a })
      }
      const took = runner.take(a)
      if (took.taken) return json(res, 202, runner.state(a.jobId))
      if (took.why === 'known') return json(res, 200, runner.state(a.jobId))
      return json(res, REFUSAL_STATUS[took.why], { error: took.why })
    })
  })
}

/** A worker with nothing to keep between jobs: each job is the job-mode handler, run in this process. */
export function handlerWorker<I>(handler: (ctx: RunContext<I>) => Promise<UtilityOutcome>, log: Logger): PoolWorker {
  return {
    start: async () => {},
    run: (config) => runJob(config, handler, log),
    abort: () => {}, // the runner retires, and exits if the run does not unwind
    kept: () => [],
  }
}

/**
 * A pool program: reads its settings, starts the worker, serves the operator until SIGTERM.
 * `makeWorker` gets the program's logger.
 */
export async function servePool(makeWorker: (log: Logger) => PoolWorker, stop?: () => Promise<void>): Promise<void> {
  const log = pino({ base: { component: 'runner', mode: 'pool' } })
  const settings = loadPoolSettings()
  const worker = makeWorker(log)
  const runner = new PoolRunner(worker, settings, log, { strays: containerProcessCheck(worker) })
  const server = poolServer(runner, settings, log)
  await runner.start()
  server.listen(settings.port, () => log.info({ port: settings.port }, 'pool runner listening'))
  process.once('SIGTERM', () => {
    runner.stopping()
    server.close()
    void (stop?.() ?? Promise.resolve()).finally(() => process.exit(0))
  })
}
