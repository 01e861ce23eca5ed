import { execFileSync, spawn } from 'node:child_process'
import { createServer, type ServerResponse } from 'node:http'
import { request } from 'node:https'
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import pg from 'pg'
import { PDFDocument } from 'pdf-lib'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { BIN_DIR, NAMESPACE, REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'
import { livePid, processStartTime, writePidFile } from '../platform/pid-files.js'
import { until } from '../platform/wait-for.js'
import { seriesBy } from './client-metrics.js'
import { statSeconds } from './cpu-shares.js'
import { percentile } from './percentile.js'

/**
 * `make bench-depth`: the platform with its queue deep (docs/benchmarks.md, "Deep queues").
 * split-pdf jobs whose input is a server of the bench's own that answers nothing until told: the
 * utility's slots fill and every later job waits, queued, as a UtilityJob. The gateway and the
 * operator run as the chart's ServiceAccounts under the chart's API Priority and Fairness objects
 * (rendered from charts/dutil), as an install has them. At depth 0 and at each of BENCH_DEPTHS:
 * the accept route (BENCH_DEPTH_SAMPLE requests, 8 at once), another client's ConfigMap reads
 * meanwhile (a ServiceAccount of another namespace, 20 a second), the API server's 429s by flow
 * schema and dutil's watches that ended, the programs' RSS, `kubectl get utilityjobs` (pages of
 * 500, kubectl's default, and one list), and the time for a restarted gateway to be ready and a
 * restarted operator to admit again. At the end the input answers, and the drain rate is read.
 *
 *   BENCH_DEPTHS=5000,20000 (default)  BENCH_DEPTH_SAMPLE=500  BENCH_DEPTH_DRAIN_SECONDS=60
 */
const DEPTHS = (process.env.BENCH_DEPTHS ?? '5000,20000').split(',').map(Number)
const SAMPLE = Number(process.env.BENCH_DEPTH_SAMPLE ?? 500)
const DRAIN_SECONDS = Number(process.env.BENCH_DEPTH_DRAIN_SECONDS ?? 60)
const KEYS = 20
const CONCURRENCY = 8
const FILL_CONCURRENCY = 16
const benchDir = join(REPO_ROOT, '.bench', 'depth')
const say = (m: string) => console.log(`[bench-depth] ${m}`)

// The input: held until released, then a one-page PDF. A held download gets a byte every 20 s,
// so the runner's 60 s no-data timeout never ends it: its job keeps the slot until released.
const pdf = await (async () => {
  const doc = await PDFDocument.create()
  doc.addPage([200, 200])
  return Buffer.from(await doc.save())
})()
interface Held {
  res: ServerResponse
  sent: number
  timer: NodeJS.Timeout
}
const held: Held[] = []
let released = false
const arrived: Array<() => void> = []
const release = (h: Held) => {
  clearInterval(h.timer)
  h.res.end(pdf.subarray(h.sent))
}
const input = createServer((req, res) => {
  req.resume()
  for (const f of arrived.splice(0)) f()
  res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': pdf.length })
  if (released) return void res.end(pdf)
  const h: Held = {
    res,
    sent: 1,
    timer: setInterval(() => h.sent < pdf.length - 1 && h.res.write(pdf.subarray(h.sent, ++h.sent)), 20_000),
  }
  res.write(pdf.subarray(0, 1))
  held.push(h)
})
await new Promise<void>((r) => input.listen(0, '127.0.0.1', r))
const inputUrl = `http://127.0.0.1:${(input.address() as AddressInfo).port}/report.pdf`
const nextArrival = () => new Promise<void>((r) => arrived.push(r))

mkdirSync(benchDir, { recursive: true })
const platform = await startPlatform({
  dir: join(benchDir, 'platform'),
  ports: TEST_PORTS,
  fresh: true,
  allowLoopbackUrls: true,
  testHooks: false,
  progress: say,
  // The queue limits out of the way: the bench measures the platform at depth, not the limits.
  gatewayEnv: {
    DUTIL_MAX_QUEUED_JOBS: '1000000',
    DUTIL_MAX_QUEUED_JOBS_PER_KEY: '1000000',
    DUTIL_MAX_QUEUED_SHARE_PER_OWNER: '1',
  },
})
const kubectl = (args: string[], inputText?: string) =>
  execFileSync(join(BIN_DIR, 'kubectl'), ['--kubeconfig', platform.kubeconfigPath, ...args], {
    input: inputText,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  })
const pki = (f: string) => join(platform.dir, 'pki', f)
const server = new KubeConfig()
server.loadFromFile(platform.kubeconfigPath)
const apiServer = server.getCurrentCluster()!.server

/** A kubeconfig of a ServiceAccount (its token from the TokenRequest API). */
function serviceAccountKubeconfig(ns: string, sa: string): { path: string; token: string } {
  const token = kubectl(['create', 'token', sa, '-n', ns, '--duration=24h']).trim()
  const path = join(benchDir, `${ns}-${sa}.kubeconfig`)
  writeFileSync(
    path,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${apiServer}\n    certificate-authority: ${pki('ca.crt')}\nusers:\n- name: u\n  user:\n    token: ${token}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n    namespace: ${ns}\ncurrent-context: c\n`,
    { mode: 0o600 },
  )
  return { path, token }
}

/** Stops a platform program with SIGTERM, as a rollout does, and waits until it has exited. */
async function stop(name: 'gateway' | 'operator'): Promise<void> {
  const pid = livePid(platform.dir, name)
  const first = platform.supervisor.current(name)
  if (first?.pid === pid && first?.exitCode === null && first.signalCode === null)
    await platform.supervisor.stopOne(name, 60_000) // the platform's own process: not a crash to report
  else if (pid !== undefined) {
    const started = processStartTime(pid)
    process.kill(pid, 'SIGTERM')
    await until(`${name} exited`, async () => processStartTime(pid) !== started, 60_000, 50)
  }
}

/** Starts a stopped platform program again with `env` over its own; when it was started. */
function start(name: 'gateway' | 'operator', env: Record<string, string>): number {
  const spec = JSON.parse(readFileSync(join(platform.dir, 'pids', `${name}.json`), 'utf8')) as {
    command: string
    args: string[]
    env: Record<string, string>
  }
  Object.assign(spec.env, env)
  writeFileSync(join(platform.dir, 'pids', `${name}.json`), JSON.stringify(spec), { mode: 0o600 })
  const log = openSync(join(platform.dir, 'logs', `${name}.log`), 'a')
  const startedAt = performance.now()
  const child = spawn(spec.command, spec.args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...spec.env },
    detached: true,
    stdio: ['ignore', log, log],
  })
  child.unref()
  writePidFile(platform.dir, name, child.pid!)
  return startedAt
}

async function restart(name: 'gateway' | 'operator', env: Record<string, string>): Promise<number> {
  await stop(name)
  return start(name, env)
}
const status = async (url: string) => (await fetch(url).catch(() => null))?.status
const gatewayReady = () =>
  until('gateway ready', async () => (await status(`${platform.gatewayUrl}/readyz`)) === 200, 120_000, 50)
const operatorPort = platform.programEnv.DUTIL_OPERATOR_PORT
const operatorLeading = () =>
  until(
    'operator leading',
    async () =>
      /^dutil_operator_leader 1$/m.test(
        (await (await fetch(`http://127.0.0.1:${operatorPort}/metrics`).catch(() => null))?.text()) ?? '',
      ),
    120_000,
    50,
  )
const rssMb = (name: string) => {
  const pid = livePid(platform.dir, name)!
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
}
const logLines = (name: string, text: string) =>
  readFileSync(join(platform.dir, 'logs', `${name}.log`), 'utf8').split(text).length - 1

try {
  // The chart's ServiceAccounts and API Priority and Fairness objects, the programs under them.
  say('the gateway and the operator as the chart ServiceAccounts, under its FlowSchemas')
  for (const sa of ['dutil-gateway', 'dutil-operator']) {
    kubectl(['create', 'serviceaccount', sa, '-n', NAMESPACE])
    // What each may do is the chart's (tested with it); here the subject is the API server's view of them.
    kubectl([
      'create',
      'clusterrolebinding',
      `bench-${sa}`,
      '--clusterrole=cluster-admin',
      `--serviceaccount=${NAMESPACE}:${sa}`,
    ])
  }
  const apf = execFileSync(
    join(BIN_DIR, 'helm'),
    [
      'template',
      'dutil',
      join(REPO_ROOT, 'charts', 'dutil'),
      '-n',
      NAMESPACE,
      '-f',
      join(REPO_ROOT, 'charts', 'dutil', 'ci', 'lint-values.yaml'),
      '--show-only',
      'templates/api-priority.yaml',
    ],
    { encoding: 'utf8' },
  )
  kubectl(['apply', '-f', '-'], apf)
  await restart('gateway', { KUBECONFIG: serviceAccountKubeconfig(NAMESPACE, 'dutil-gateway').path })
  await restart('operator', { KUBECONFIG: serviceAccountKubeconfig(NAMESPACE, 'dutil-operator').path })
  await gatewayReady()
  await operatorLeading()
  for (const name of ['gateway', 'operator'])
    if (
      !readFileSync(join(platform.dir, 'logs', `${name}.log`), 'utf8').includes(
        `system:serviceaccount:${NAMESPACE}:dutil-${name}`,
      )
    )
      throw new Error(`the ${name} does not run as its ServiceAccount`)

  // Another team's client: a ServiceAccount of its own namespace reading a ConfigMap.
  kubectl(['create', 'namespace', 'neighbour'])
  kubectl(['create', 'serviceaccount', 'reader', '-n', 'neighbour'])
  kubectl(['create', 'configmap', 'settings', '-n', 'neighbour', '--from-literal=a=b'])
  kubectl(['create', 'role', 'read', '-n', 'neighbour', '--verb=get', '--resource=configmaps'])
  kubectl(['create', 'rolebinding', 'read', '-n', 'neighbour', '--role=read', '--serviceaccount=neighbour:reader'])
  const neighbourToken = serviceAccountKubeconfig('neighbour', 'reader').token
  const ca = readFileSync(pki('ca.crt'))
  const readConfigMap = () =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now()
      request(
        new URL('/api/v1/namespaces/neighbour/configmaps/settings', apiServer),
        { ca, headers: { Authorization: `Bearer ${neighbourToken}` } },
        (res) => {
          res.resume()
          res.on('end', () =>
            res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`${res.statusCode}`)),
          )
        },
      )
        .on('error', reject)
        .end()
    })

  const admin = new ApiKeyAdmin(server, NAMESPACE)
  const keys = await Promise.all(
    Array.from({ length: KEYS }, (_, i) =>
      admin.create({ name: `bench-depth-${i}`, utilities: [], rateLimitPerMinute: 100_000_000 }),
    ),
  )
  let submitted = 0
  const statuses = new Map<number, number>()
  /** Accepts `n` jobs at `concurrency`: the latency of each and the statuses. */
  const accept = async (n: number, concurrency: number) => {
    const latencies: number[] = []
    let next = 0
    const t0 = performance.now()
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          next++
          const key = keys[submitted++ % KEYS]
          const s = performance.now()
          const res = await fetch(`${platform.gatewayUrl}/v1/utilities/split-pdf/jobs`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${key.key}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ input: { url: inputUrl } }),
          }).catch(() => null)
          await res?.arrayBuffer()
          const code = res?.status ?? 0
          statuses.set(code, (statuses.get(code) ?? 0) + 1)
          if (code === 202) latencies.push(performance.now() - s)
        }
      }),
    )
    return { latencies, seconds: (performance.now() - t0) / 1000 }
  }
  const db = new pg.Pool({ connectionString: platform.databaseUrl, max: 1 })
  const queued = async () => Number((await db.query(`SELECT count(*) AS n FROM jobs WHERE state = 'queued'`)).rows[0].n)
  const apiMetrics = () => kubectl(['get', '--raw', '/metrics'])
  /** Requests by flow schema and bucket bound (`flow|le`): the time from arrival to the answer's start. */
  const latencyBuckets = (text: string) =>
    seriesBy(text, 'apiserver_flowcontrol_request_wait_duration_seconds_bucket', (l) =>
      l.execute === 'true' ? `${l.flow_schema}|${l.le}` : '',
    )
  /** Per flow schema between two readings: requests, and the bucket bound that 99 % of them waited within. */
  const waitP99 = (before: Map<string, number>, after: Map<string, number>) => {
    const flows = new Map<string, Array<[number, number]>>()
    for (const [key, n] of after) {
      if (!key) continue
      const [flow, le] = key.split('|')
      const list = flows.get(flow) ?? []
      list.push([le === '+Inf' ? Infinity : Number(le), n - (before.get(key) ?? 0)])
      flows.set(flow, list)
    }
    const out: string[] = []
    for (const [flow, buckets] of flows) {
      buckets.sort((a, b) => a[0] - b[0])
      const total = buckets.at(-1)![1]
      if (total < 10 || !/dutil|service-accounts/.test(flow)) continue
      const bound = buckets.find(([, n]) => n >= 0.99 * total)![0]
      out.push(`${flow.replace(/^dutil-dutil-/, '')} ${total} ≤ ${bound === Infinity ? '∞' : `${bound * 1000} ms`}`)
    }
    return out.sort()
  }
  const rejectedByFlow = (text: string) =>
    seriesBy(text, 'apiserver_flowcontrol_rejected_requests_total', (l) => l.flow_schema ?? '')
  const timed = (f: () => unknown) => {
    const t0 = performance.now()
    f()
    return performance.now() - t0
  }
  const cpuOf = (name: string) => statSeconds(readFileSync(`/proc/${livePid(platform.dir, name)!}/stat`, 'utf8'))

  // Warm up the accept path (connections, JIT, the API server's caches) before depth 0 counts.
  await accept(100, CONCURRENCY)
  const rows: string[] = []
  let base = 0
  for (const depth of [0, ...DEPTHS]) {
    const metricsBefore = apiMetrics()
    const rejectedBefore = rejectedByFlow(metricsBefore)
    const waitsBefore = latencyBuckets(metricsBefore)
    const watchEnds = () => logLines('gateway', 'watch ended') + logLines('operator', 'watch ended')
    const watchEndsBefore = watchEnds()
    const okBefore = statuses.get(202) ?? 0
    const allBefore = [...statuses.values()].reduce((a, b) => a + b, 0)
    // Another client's reads while dutil fills its queue and accepts.
    let reading = true
    const reads: number[] = []
    let readErrors = 0
    const reader = (async () => {
      while (reading) {
        await readConfigMap().then(
          (ms) => reads.push(ms),
          () => readErrors++,
        )
        await new Promise((r) => setTimeout(r, 50))
      }
    })()
    // Fill to the depth (the slots' jobs hold the input; every later one waits).
    if (depth > 0) {
      const t0 = performance.now()
      let have = await queued()
      while (have < depth) {
        await accept(Math.min(2000, depth - have), FILL_CONCURRENCY)
        have = await queued()
      }
      say(`queue at ${have} (filled in ${((performance.now() - t0) / 1000).toFixed(0)} s)`)
    }
    const depthNow = await queued()
    const cpuBefore = { gateway: cpuOf('gateway'), operator: cpuOf('operator') }
    const run = await accept(SAMPLE, CONCURRENCY)
    const cpuMs = (name: 'gateway' | 'operator') =>
      (((cpuOf(name) - cpuBefore[name]) * 1000) / Math.max(1, run.latencies.length)).toFixed(1)
    const cpu = `${cpuMs('gateway')} / ${cpuMs('operator')}`
    reading = false
    await reader
    const rate = run.latencies.length / run.seconds
    if (depth === 0) base = rate
    const metricsAfter = apiMetrics()
    const waits = waitP99(waitsBefore, latencyBuckets(metricsAfter))
    const rejectedAfter = rejectedByFlow(metricsAfter)
    const rejected = [...rejectedAfter]
      .map(([flow, n]) => [flow, n - (rejectedBefore.get(flow) ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .map(([flow, n]) => `${flow} ${n}`)
    const notAccepted =
      [...statuses.values()].reduce((a, b) => a + b, 0) - allBefore - ((statuses.get(202) ?? 0) - okBefore)
    const rss = { gateway: rssMb('gateway'), operator: rssMb('operator') }
    const getPaged = timed(() => kubectl(['get', 'utilityjobs', '-n', NAMESPACE]))
    const getWhole = timed(() => kubectl(['get', 'utilityjobs', '-n', NAMESPACE, '--chunk-size=0']))
    // A restarted gateway: SIGTERM → ready.
    const gwStart = await restart('gateway', {})
    await gatewayReady()
    const gatewayMs = performance.now() - gwStart
    // A restarted operator: SIGTERM; one slot's input answers (its job ends while no operator
    // runs); start → leading → the next job admitted and at its input.
    await until('a job at its input', async () => held.length > 0, 60_000, 50)
    await stop('operator')
    release(held.shift()!)
    const admittedAgain = nextArrival()
    const opStart = start('operator', {})
    await operatorLeading()
    const leadingMs = performance.now() - opStart
    await admittedAgain
    const admittingMs = performance.now() - opStart
    const row = [
      depthNow.toLocaleString('en'),
      rate.toFixed(1),
      depth === 0 ? '1.00' : (rate / base).toFixed(2),
      percentile(run.latencies, 99).toFixed(0),
      cpu,
      String(notAccepted),
      rejected.join(', ') || '0',
      waits.join('; '),
      String(watchEnds() - watchEndsBefore),
      `${percentile(reads, 50).toFixed(0)} / ${percentile(reads, 99).toFixed(0)} (${reads.length} reads${readErrors ? `, ${readErrors} failed` : ''})`,
      `${rss.gateway.toFixed(0)} / ${rss.operator.toFixed(0)}`,
      `${(getPaged / 1000).toFixed(1)} / ${(getWhole / 1000).toFixed(1)}`,
      (gatewayMs / 1000).toFixed(1),
      `${(leadingMs / 1000).toFixed(1)} / ${(admittingMs / 1000).toFixed(1)}`,
    ]
    rows.push(`| ${row.join(' | ')} |`)
    say(rows.at(-1)!)
  }
  // The input answers: how fast the queue drains (jobs finished a second, from the job record).
  released = true
  for (const h of held.splice(0)) release(h)
  const done = async () =>
    Number((await db.query(`SELECT count(*) AS n FROM jobs WHERE state IN ('succeeded', 'failed')`)).rows[0].n)
  await new Promise((r) => setTimeout(r, 10_000))
  const d0 = await done()
  await new Promise((r) => setTimeout(r, DRAIN_SECONDS * 1000))
  const drained = (await done()) - d0
  await db.end()
  const table = [
    '| queued | accepts/s | vs depth 0 | accept p99 ms | gateway / operator CPU-ms per accept | not 202 | API 429s by flow schema | API requests and their p99 wait by flow schema (fill and sample) | dutil watches ended | other client GET p50 / p99 ms (fill and sample) | gateway / operator RSS MB | kubectl get s (pages of 500 / one list) | gateway restart → ready s | operator restart → leading / admitting s |',
    '|---:|---:|---:|---:|---|---:|---|---|---:|---|---|---|---:|---|',
    ...rows,
    '',
    `drain once the input answers: ${(drained / DRAIN_SECONDS).toFixed(2)} jobs/s over ${DRAIN_SECONDS} s (split-pdf, ${platform.programEnv.DUTIL_UTILITY_CONCURRENCY ?? 'default'} slots)`,
    `statuses of every accept: ${[...statuses].map(([s, n]) => `${s || 'no answer'} ${n}`).join(', ')}`,
  ]
  console.log(`\n${table.join('\n')}`)
  writeFileSync(join(benchDir, 'report.md'), `${table.join('\n')}\n`)
} finally {
  for (const h of held.splice(0)) {
    clearInterval(h.timer)
    h.res.destroy()
  }
  input.close()
  await platform.stop()
}
