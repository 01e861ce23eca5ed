import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  JOB_RECORD_FINALIZER,
  LABELS,
  MANAGED_BY,
  UTILITY_JOB,
} from '../../contract/api-group.js'
import { newId, objectNameOf } from '../../contract/ids.js'
import { inputObjectKey } from '../../contract/runner-protocol.js'
import { isoMs } from '../../contract/time.js'
import { REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'
import { livePid } from '../platform/pid-files.js'
import { until } from '../platform/wait-for.js'
import { statSeconds } from './cpu-shares.js'

/**
 * `make bench-load`: the accept route under a fixed concurrency, beside the floor it stands on,
 * raw UtilityJob creates straight through the API server, in the same run at the same
 * concurrency. Mixed utilities, 20 keys; the operator is paused so that nothing runs (as a
 * client sees the accept path alone). Then the gateway's memory: RSS after 10,000 accepted
 * requests, then after every further 10,000 up to BENCH_LOAD_TOTAL. With BENCH_LOAD_PROFILE=1 the gateway runs with
 * --cpu-prof and the heaviest functions of the accept path are listed.
 *
 *   BENCH_LOAD_SECONDS=60  BENCH_LOAD_CONCURRENCY=32  BENCH_LOAD_KEYS=20  BENCH_LOAD_TOTAL=100000
 *   BENCH_LOAD_TRACING=1: tracing's cost as well: the accept route of a gateway that traces every
 *   request (sampling 1.0) into a Jaeger on loopback, after the same route of one that does not,
 *   in the same run, with the CPU time each gateway and Jaeger spent per accepted request.
 *   BENCH_LOAD_TRACING_SINK=discard: the traced gateway sends its spans to a loopback receiver
 *   that answers every export at once and keeps nothing (the gateway's own cost, without a
 *   collector's ingest on the same cores)
 */
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 60)
const CONCURRENCY = Number(process.env.BENCH_LOAD_CONCURRENCY ?? 32)
const KEYS = Number(process.env.BENCH_LOAD_KEYS ?? 20)
const TOTAL = Number(process.env.BENCH_LOAD_TOTAL ?? 100_000)
const PROFILE = process.env.BENCH_LOAD_PROFILE === '1'
const benchDir = join(REPO_ROOT, '.bench')
const profDir = join(benchDir, 'cpu-profiles')

const BODIES: Record<string, unknown> = {
  'split-pdf': { input: { url: 'https://files.example.com/report.pdf' } },
  'html-pdf': { input: { url: 'https://www.example.com/invoice.html' } },
  'unzip-files': { input: { url: 'https://files.example.com/bundle.zip' } },
  'zip-files': {
    input: {
      files: [
        { url: 'https://files.example.com/a.pdf', fileName: 'a.pdf' },
        { url: 'https://files.example.com/b.pdf', fileName: 'b.pdf' },
      ],
    },
  },
}
const SLUGS = Object.keys(BODIES)

interface Run {
  count: number
  errors: number
  seconds: number
  latencies: number[]
}

/** Runs one after another as one. */
function joined(runs: Run[]): Run {
  return {
    count: runs.reduce((n, r) => n + r.count, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    seconds: runs.reduce((n, r) => n + r.seconds, 0),
    latencies: runs.flatMap((r) => r.latencies).sort((a, b) => a - b),
  }
}

/** Runs `op` at CONCURRENCY until `seconds` pass or `limit` operations are done. */
async function drive(
  op: (i: number) => Promise<void>,
  seconds: number,
  limit = Number.POSITIVE_INFINITY,
): Promise<Run> {
  const latencies: number[] = []
  let next = 0
  let errors = 0
  const started = performance.now()
  const end = started + seconds * 1000
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end && next < limit) {
        const i = next++
        const t0 = performance.now()
        try {
          await op(i)
          latencies.push(performance.now() - t0)
        } catch {
          errors++
        }
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  return { count: latencies.length, errors, seconds: (performance.now() - started) / 1000, latencies }
}

const pct = (r: Run, p: number) =>
  r.latencies[Math.min(r.latencies.length - 1, Math.floor((r.latencies.length * p) / 100))] ?? NaN
const row = (name: string, r: Run) =>
  `| ${name} | ${(r.count / r.seconds).toFixed(1)} | ${pct(r, 50).toFixed(0)} | ${pct(r, 99).toFixed(0)} | ${r.count.toLocaleString('en')} | ${r.errors} |`

async function rssMb(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return Number(/^process_resident_memory_bytes\s+(\S+)/m.exec(text)![1]) / 1048576
}

/** Self time per function over every profile written, heaviest first. */
function profileSummary(dir: string, top = 15): string[] {
  const self = new Map<string, number>()
  let total = 0
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
      nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[]
      samples: number[]
    }
    const byId = new Map(p.nodes.map((n) => [n.id, n]))
    for (const id of p.samples) {
      const f = byId.get(id)!.callFrame
      const where = f.url ? `${f.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${f.lineNumber + 1}` : ''
      const name = `${f.functionName || '(anonymous)'} ${where}`.trim()
      self.set(name, (self.get(name) ?? 0) + 1)
      total++
    }
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, n]) => `| ${((100 * n) / total).toFixed(1)} % | ${name} |`)
}

rmSync(profDir, { recursive: true, force: true })
mkdirSync(profDir, { recursive: true })
const TRACING = process.env.BENCH_LOAD_TRACING === '1'
// The traced gateway's sampling ratio (BENCH_LOAD_TRACING_RATIO, default 1: every request).
const TRACING_RATIO = Number(process.env.BENCH_LOAD_TRACING_RATIO ?? 1)
const DISCARD_SPANS = process.env.BENCH_LOAD_TRACING_SINK === 'discard'
const platform = await startPlatform({
  dir: benchDir,
  ports: TEST_PORTS,
  fresh: true,
  allowLoopbackUrls: true,
  testHooks: false,
  // BENCH_LOAD_TRACING=1: the platform runs Jaeger, which the traced gateway below sends to.
  tracing: TRACING,
  gatewayEnv: {
    DUTIL_MAX_QUEUED_JOBS: '1000000',
    DUTIL_MAX_QUEUED_JOBS_PER_KEY: '1000000',
    DUTIL_MAX_QUEUED_SHARE_PER_OWNER: '1',
  },
})
/**
 * A gateway of the bench's own (the platform's settings, its port + `offset`, its logs dropped),
 * ready before this returns; stopped with SIGTERM at the end, and awaited (a profiled one writes
 * its profile as it exits).
 */
const extra: ChildProcess[] = []
async function extraGateway(
  offset: number,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<{ url: string; pid: number }> {
  const port = String(Number(new URL(platform.gatewayUrl).port) + offset)
  const child = spawn(process.execPath, [...nodeArgs, join(REPO_ROOT, 'dist', 'gateway', 'main.js')], {
    env: { ...process.env, ...platform.programEnv, DUTIL_PORT: port, DUTIL_FILES_PORT: '', ...env },
    stdio: 'ignore',
  })
  extra.push(child)
  const url = `http://127.0.0.1:${port}`
  await until(
    `gateway on ${port} ready`,
    async () => (await fetch(`${url}/readyz`).catch(() => null))?.status === 200,
    60_000,
    200,
  )
  return { url, pid: child.pid! }
}
/**
 * An OTLP/HTTP receiver on loopback (its own process) that reads each export and answers it with
 * an empty success, keeping nothing: what a collector elsewhere costs the gateway's machine.
 */
async function discardingSink(offset: number): Promise<string> {
  const port = Number(new URL(platform.gatewayUrl).port) + offset
  const program = `require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 }); res.end() }) }).listen(${port}, '127.0.0.1')`
  extra.push(spawn(process.execPath, ['-e', program], { stdio: 'ignore' }))
  const url = `http://127.0.0.1:${port}`
  await until(`span sink on ${port}`, async () => (await fetch(url, { method: 'POST' }).catch(() => null))?.ok === true)
  return url
}
/** CPU seconds (user + system) a process has used so far. */
const cpuSeconds = (pid: number): number => statSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'))
const operatorPid = livePid(platform.dir, 'operator')!
try {
  // With tracing: two such gateways, started alike, one that traces every request and one that does not.
  const platformGateway = { url: platform.gatewayUrl, pid: 0 }
  const untraced = TRACING ? await extraGateway(20, { DUTIL_TRACING_ENDPOINT: '' }) : platformGateway
  const sinkUrl = TRACING && DISCARD_SPANS ? await discardingSink(23) : undefined
  const traced = TRACING
    ? await extraGateway(21, {
        DUTIL_TRACING_SAMPLE_RATIO: String(TRACING_RATIO),
        ...(sinkUrl ? { DUTIL_TRACING_ENDPOINT: sinkUrl } : {}),
      })
    : platformGateway
  // With a profile: one under --cpu-prof (Node refuses the flag in NODE_OPTIONS).
  const gatewayUrl = PROFILE
    ? (await extraGateway(22, {}, ['--cpu-prof', `--cpu-prof-dir=${profDir}`])).url
    : traced.url
  const kc = new KubeConfig()
  kc.loadFromFile(platform.kubeconfigPath)
  const admin = new ApiKeyAdmin(kc, 'dutil')
  const keys = await Promise.all(
    Array.from({ length: KEYS }, (_, i) =>
      admin.create({ name: `bench-load-${i}`, utilities: [], rateLimitPerMinute: 100_000_000 }),
    ),
  )
  const custom = kc.makeApiClient(CustomObjectsApi)
  // Nothing runs: the operator is paused for the whole benchmark.
  process.kill(operatorPid, 'SIGSTOP')

  const raw = (i: number) => {
    const now = Date.now()
    const jobId = newId('job', now)
    const slug = SLUGS[i % SLUGS.length]
    const key = keys[i % keys.length]
    return custom
      .createNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: 'dutil',
        plural: UTILITY_JOB.plural,
        body: {
          apiVersion: API_GROUP_VERSION,
          kind: 'UtilityJob',
          metadata: {
            name: objectNameOf(jobId),
            labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.utility]: slug },
            finalizers: [JOB_RECORD_FINALIZER],
          },
          spec: {
            jobId,
            utility: slug,
            mode: 'async',
            apiKeyId: key.id,
            apiKeyName: 'bench',
            createdAt: isoMs(now),
            inputKey: inputObjectKey(jobId),
            metadata: null,
          },
        },
      })
      .then(() => undefined)
  }
  const acceptAt = (url: string) => async (i: number) => {
    const slug = SLUGS[i % SLUGS.length]
    const res = await fetch(`${url}/v1/utilities/${slug}/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${keys[i % keys.length].key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(BODIES[slug]),
    })
    await res.arrayBuffer()
    if (res.status !== 202) throw new Error(`accept: ${res.status}`)
  }
  const accept = acceptAt(gatewayUrl)

  console.log(`[bench-load] ${CONCURRENCY} at once, ${SECONDS} s each, ${KEYS} keys, ${SLUGS.length} utilities`)
  const rawRun = await drive(raw, SECONDS)
  console.log(row('raw UtilityJob create', rawRun))
  // With tracing, the two gateways take turns (four slices each), so that what grows over the run
  // (etcd, the job record) weighs on both alike.
  let untracedRun: Run | undefined
  let acceptRun: Run
  // CPU seconds over all the slices (and the traced gateway's last export): each gateway's own,
  // and Jaeger's. Each gateway idles while the other runs; its spans leave in batches up to 5 s later.
  const cpu = { untraced: 0, traced: 0, jaeger: 0 }
  const jaegerPid = TRACING ? livePid(platform.dir, 'jaeger') : undefined
  const jaegerCpu = () => (jaegerPid ? cpuSeconds(jaegerPid) : 0)
  if (TRACING) {
    const slices: Run[][] = [[], []]
    const before = [cpuSeconds(untraced.pid), cpuSeconds(traced.pid), jaegerCpu()]
    for (let round = 0; round < 4; round++) {
      slices[0].push(await drive(acceptAt(untraced.url), SECONDS / 4))
      slices[1].push(await drive(accept, SECONDS / 4))
    }
    await new Promise((r) => setTimeout(r, 6000))
    cpu.untraced = cpuSeconds(untraced.pid) - before[0]
    cpu.traced = cpuSeconds(traced.pid) - before[1]
    cpu.jaeger = jaegerCpu() - before[2]
    untracedRun = joined(slices[0])
    acceptRun = joined(slices[1])
    console.log(row('gateway accept, not traced', untracedRun))
  } else acceptRun = await drive(accept, SECONDS)
  console.log(row(TRACING ? `gateway accept, traced (sampling ${TRACING_RATIO})` : 'gateway accept', acceptRun))
  // Memory: RSS once 10,000 requests were accepted, then after every further 10,000 up to TOTAL.
  let total = acceptRun.count
  const rssAt: Array<[number, number]> = []
  for (let mark = 10_000; mark <= Math.max(TOTAL, 10_000); mark += 10_000) {
    if (total < mark) total += (await drive(accept, 3600, mark - total)).count
    rssAt.push([total, await rssMb(gatewayUrl)])
    console.log(
      `[bench-load] gateway RSS ${rssAt.at(-1)![1].toFixed(0)} MB after ${total.toLocaleString('en')} accepted`,
    )
  }
  const [, rss10k] = rssAt[0]
  const [, rssEnd] = rssAt.at(-1)!
  const lines = [
    '| route | requests/s | p50 ms | p99 ms | requests | errors |',
    '|---|---|---|---|---|---|',
    row('raw UtilityJob create (API server)', rawRun),
    ...(untracedRun ? [row('gateway accept, not traced', untracedRun)] : []),
    row(
      `gateway accept (POST /v1/utilities/{slug}/jobs)${TRACING ? `, traced (sampling ${TRACING_RATIO})` : ''}`,
      acceptRun,
    ),
    '',
    ...(untracedRun
      ? [
          `tracing${DISCARD_SPANS ? ' (spans to a discarding receiver)' : ''}: accepts/s ${((1 - acceptRun.count / acceptRun.seconds / (untracedRun.count / untracedRun.seconds)) * 100).toFixed(1)} % lower (target ≤ 5 %), p99 ${(pct(acceptRun, 99) / pct(untracedRun, 99)).toFixed(2)}× (target ≤ 1.1×)`,
          `gateway CPU per accepted request: traced ${((cpu.traced * 1000) / acceptRun.count).toFixed(2)} ms, not traced ${((cpu.untraced * 1000) / untracedRun.count).toFixed(2)} ms (${((cpu.traced / acceptRun.count / (cpu.untraced / untracedRun.count) - 1) * 100).toFixed(1)} % more); Jaeger: ${cpu.jaeger.toFixed(1)} CPU s (${((cpu.jaeger * 1000) / acceptRun.count).toFixed(2)} ms per traced request)`,
        ]
      : []),
    `accept / raw throughput: ${((acceptRun.count / acceptRun.seconds / (rawRun.count / rawRun.seconds)) * 100).toFixed(0)} % (target ≥ 90 %); accept p99 / raw p99: ${(pct(acceptRun, 99) / pct(rawRun, 99)).toFixed(2)} (target ≤ 1.5)`,
    `gateway RSS MB by accepted requests: ${rssAt.map(([n, mb]) => `${(n / 1000).toFixed(0)}k ${mb.toFixed(0)}`).join(', ')}`,
    `gateway RSS: ${rss10k.toFixed(0)} MB after 10,000 accepted, ${rssEnd.toFixed(0)} MB after ${total.toLocaleString('en')} (${(((rssEnd - rss10k) / rss10k) * 100).toFixed(1)} %; target ≤ 10 %)`,
  ]
  console.log(`\n${lines.join('\n')}`)
} finally {
  try {
    process.kill(operatorPid, 'SIGCONT')
  } catch {
    // already gone
  }
  await Promise.all(
    extra.map(async (g) => {
      if (g.exitCode !== null || g.signalCode !== null) return
      const exited = new Promise((r) => g.once('exit', r))
      g.kill('SIGTERM')
      await exited
    }),
  )
  await platform.stop()
  if (PROFILE)
    console.log(
      `\nCPU profile of the gateway (self time):\n| share | function |\n|---|---|\n${profileSummary(profDir).join('\n')}`,
    )
}
