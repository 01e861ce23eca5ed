import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, Watch, type V1Pod } from '@kubernetes/client-node'
import { Client as Minio } from 'minio'
import { LABELS } from '../../contract/api-group.js'
import { ENV, resultObjectKey, type RunnerResult } from '../../contract/runner-protocol.js'
import { outputKey } from '../../contract/storage-keys.js'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { BIN_DIR, NAMESPACE, REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'
import { until } from '../platform/wait-for.js'
import { requestRows, servedRequests } from './client-metrics.js'
import { cpuShares, cpuSharesTable, cpuSnapshot, type CpuSnapshot } from './cpu-shares.js'
import { percentile } from './percentile.js'

/**
 * `make bench-nodes`: one operator leader with many nodes (docs/benchmarks.md, "Many nodes,
 * simulated"). KWOK (sigs.k8s.io/kwok, built from its Go module) keeps BENCH_NODES simulated nodes
 * (100) alive and takes each runner pod the scheduler binds there from Pending to Running, as a
 * kubelet would. A simulated runner (this process) then does what a runner and its kubelet do:
 * it reads the job from the pod's environment, writes an output and the result manifest to MinIO
 * with the job's own credentials, and reports the pod's container as exited 0. Nothing else is
 * simulated: the gateway, the operator (one leader), the API server, the controller manager (its
 * client limits raised as docs/operations.md says) and the scheduler are the platform's own. The
 * local platform runs without its node agent, so every runner pod goes to a simulated node.
 *
 * BENCH_CLIENTS clients (64) each send sync split-pdf jobs one after another for BENCH_SECONDS
 * (60) over BENCH_KEYS keys (16), after a warm-up; measured: completed jobs/s, accept → succeeded
 * p50/p99, CPU per job by component, and the API server's requests per job by verb and resource.
 *
 *   BENCH_NODES=100  BENCH_CLIENTS=64  BENCH_KEYS=16  BENCH_SECONDS=60  BENCH_SLOTS=200
 *   BENCH_KCM_FLAGS="--kube-api-qps=300 --kube-api-burst=600 --concurrent-job-syncs=50"
 */
const NODES = Number(process.env.BENCH_NODES ?? 100)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 64)
const KEYS = Number(process.env.BENCH_KEYS ?? 16)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const SLOTS = Number(process.env.BENCH_SLOTS ?? 200)
const KCM_FLAGS = process.env.BENCH_KCM_FLAGS ?? '--kube-api-qps=300 --kube-api-burst=600 --concurrent-job-syncs=50'
const WARM_UP_SECONDS = 15
const benchDir = join(REPO_ROOT, '.bench', 'nodes')
const say = (m: string) => console.log(`[bench-nodes] ${m}`)

/**
 * KWOK's stages from its "fast" set (in its module, where make binaries left it), but the
 * completion: the simulated runner ends each pod itself.
 */
function kwokStages(): string {
  const version = /^KWOK_VERSION=(\S+)$/m.exec(
    readFileSync(join(REPO_ROOT, 'test', 'platform', 'versions.env'), 'utf8'),
  )![1]
  const modules = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim()
  const stage = join(modules, 'sigs.k8s.io', `kwok@${version}`, 'kustomize', 'stage')
  return [
    join(stage, 'node', 'fast', 'node-initialize.yaml'),
    join(stage, 'pod', 'fast', 'pod-ready.yaml'),
    join(stage, 'pod', 'fast', 'pod-delete.yaml'),
  ]
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n---\n')
}

mkdirSync(benchDir, { recursive: true })
process.env.DUTIL_TEST_KCM_FLAGS = KCM_FLAGS
const platform = await startPlatform({
  dir: join(benchDir, 'platform'),
  ports: TEST_PORTS,
  fresh: true,
  allowLoopbackUrls: true,
  testHooks: false,
  nodeAgent: false,
  progress: say,
  gatewayEnv: {
    // Every runner pod on a simulated node (they carry KWOK's taint).
    DUTIL_RUNNER_POD: JSON.stringify({
      default: {
        nodeSelector: { type: 'kwok' },
        tolerations: [{ key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' }],
      },
    }),
    DUTIL_UTILITY_CONCURRENCY: JSON.stringify({ 'split-pdf': SLOTS }),
    DUTIL_MAX_QUEUED_JOBS: '1000000',
    DUTIL_MAX_QUEUED_JOBS_PER_KEY: '1000000',
  },
})
// Interrupted (Ctrl-C), the platform goes with the bench.
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    if (kwokPid) process.kill(kwokPid, 'SIGKILL')
    platform.killNow()
    process.exit(130)
  })
const kubectl = (args: string[], input?: string) =>
  execFileSync(join(BIN_DIR, 'kubectl'), ['--kubeconfig', platform.kubeconfigPath, ...args], {
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  })
const kc = new KubeConfig()
kc.loadFromFile(platform.kubeconfigPath)
const core = kc.makeApiClient(CoreV1Api)
let kwokPid: number | undefined

try {
  say(`${NODES} simulated nodes, KWOK ${BIN_DIR}/kwok`)
  const nodes = Array.from({ length: NODES }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: `kwok-node-${i}`,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: { type: 'kwok', 'kubernetes.io/hostname': `kwok-node-${i}`, 'kubernetes.io/os': 'linux' },
    },
    spec: { taints: [{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }] },
  }))
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: nodes }))
  const stages = join(benchDir, 'kwok-stages.yaml')
  writeFileSync(stages, kwokStages())
  const kwokLogPath = join(platform.dir, 'logs', 'kwok.log')
  const kwokLog = openSync(kwokLogPath, 'w')
  const kwok = spawn(
    join(BIN_DIR, 'kwok'),
    [
      `--kubeconfig=${platform.kubeconfigPath}`,
      '--manage-all-nodes=false',
      '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      `--config=${stages}`,
      '--node-lease-duration-seconds=40',
      '--server-address=127.0.0.1:0',
      '--cidr=10.200.0.0/16',
      '--node-ip=10.199.0.1',
    ],
    { stdio: ['ignore', kwokLog, kwokLog] },
  )
  kwokPid = kwok.pid
  await until(
    `${NODES} nodes Ready (KWOK's log: ${kwokLogPath})`,
    async () =>
      kubectl(['get', 'nodes', '-l', 'type=kwok', '--no-headers'])
        .split('\n')
        .filter((l) => /\sReady\s/.test(l)).length === NODES,
    120_000,
    500,
  )
  // The API server taints a new node not-ready; a cluster's node lifecycle controller lifts it once
  // the node is Ready. The platform runs no such controller: lifted here, as it would be.
  kubectl(['taint', 'nodes', '-l', 'type=kwok', 'node.kubernetes.io/not-ready:NoSchedule-'])

  // The simulated runner: for each runner pod KWOK made Running, the runner's work and exit.
  const storage = new URL(platform.storage.endpoint)
  const done = new Set<string>()
  let simulated = 0
  const tinyPdf = Buffer.from('%PDF-1.4\n%%EOF\n')
  const runPod = async (pod: V1Pod) => {
    const name = pod.metadata!.name!
    if (done.has(name)) return
    done.add(name)
    const container = pod.spec!.containers[0]!
    const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? '']))
    const minio = new Minio({
      endPoint: storage.hostname,
      port: Number(storage.port),
      useSSL: false,
      accessKey: env[ENV.accessKey]!,
      secretKey: env[ENV.secretKey]!,
      sessionToken: env[ENV.sessionToken] || undefined,
      region: env[ENV.region] || platform.storage.region,
    })
    const jobId = env[ENV.jobId]!
    const key = outputKey(env[ENV.utility]!, Date.parse(env[ENV.createdAt]!), jobId, 'page-1.pdf')
    const startedAt = new Date().toISOString()
    await minio.putObject(env[ENV.bucket]!, key, tinyPdf, tinyPdf.length, { 'Content-Type': 'application/pdf' })
    const result: RunnerResult = {
      files: [{ key, name: 'page-1.pdf', size: tinyPdf.length, contentType: 'application/pdf', pageNumber: 1 }],
      extras: { pageCount: 1 },
      startedAt,
      upstreamMs: 0,
      storageMs: 0,
    }
    const manifest = Buffer.from(JSON.stringify(result))
    await minio.putObject(env[ENV.bucket]!, resultObjectKey(jobId), manifest, manifest.length, {
      'Content-Type': 'application/json',
    })
    const now = new Date().toISOString()
    await core.patchNamespacedPodStatus(
      {
        name,
        namespace: NAMESPACE,
        body: {
          status: {
            phase: 'Succeeded',
            containerStatuses: pod.spec!.containers.map((c) => ({
              name: c.name,
              image: c.image!,
              imageID: '',
              ready: false,
              restartCount: 0,
              started: false,
              state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: startedAt, finishedAt: now } },
            })),
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )
    simulated++
  }
  // Level-triggered, as a kubelet is: pods from a watch (started again when it ends) and, every
  // 2 s, from a list, so a watch that stalls holds nothing up. The list asks for running pods
  // only: the pods of finished jobs stay (until their UtilityJob's grace ends), and listing them
  // all every 2 s cost the API server and the bench ~5 CPU-ms a job each (docs/benchmarks.md).
  const take = (pod: V1Pod) => {
    if (pod.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp)
      void runPod(pod).catch((err: unknown) => say(`simulated runner: ${pod.metadata?.name}: ${String(err)}`))
  }
  let stopping = false
  const watchPods = async (): Promise<void> => {
    await new Watch(kc).watch(
      `/api/v1/namespaces/${NAMESPACE}/pods`,
      { labelSelector: LABELS.jobId },
      (type: string, pod: V1Pod) => type !== 'DELETED' && take(pod),
      (err: unknown) => {
        if (stopping) return
        if (err) say(`pod watch ended (${String(err)}); watching again`)
        setTimeout(() => void watchPods().catch(() => {}), 500)
      },
    )
  }
  await watchPods()
  const relist = setInterval(
    () =>
      void core
        .listNamespacedPod({ namespace: NAMESPACE, labelSelector: LABELS.jobId, fieldSelector: 'status.phase=Running' })
        .then((list) => list.items.forEach(take))
        .catch(() => {}),
    2000,
  )

  const progress = setInterval(() => say(`pods run ${simulated} of ${done.size} seen running`), 5000)
  const admin = new ApiKeyAdmin(kc, NAMESPACE)
  const keys: string[] = []
  for (let i = 0; i < KEYS; i++)
    keys.push((await admin.create({ name: `nodes-${i}`, utilities: [], rateLimitPerMinute: 1_000_000 })).key)
  await new Promise((r) => setTimeout(r, 3000)) // the gateway's key watch
  const input = { url: 'http://127.0.0.1:9/report.pdf' }
  let stopAt = 0
  const latencies: number[] = []
  const failures = new Map<string, number>()
  const client = async (i: number, record: () => boolean) => {
    const key = keys[i % keys.length]
    while (Date.now() < stopAt) {
      const t0 = performance.now()
      const res = await fetch(`${platform.gatewayUrl}/v1/utilities/split-pdf`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input }),
      }).catch((err: unknown) => ({ status: 0, text: async () => String(err) }))
      const body = await res.text()
      if (!record()) continue
      if (res.status === 200) latencies.push(performance.now() - t0)
      else {
        // A sync run that waited its whole time answers 202 with the job still queued or running.
        const job = /"status":"(\w+)"/.exec(body)?.[1] ?? ''
        const what = `${res.status}${job ? ` (${job})` : ''} ${/"code":"(\w+)"/.exec(body)?.[1] ?? ''}`.trim()
        failures.set(what, (failures.get(what) ?? 0) + 1)
      }
    }
  }
  say(`warm-up ${WARM_UP_SECONDS} s`)
  stopAt = Date.now() + WARM_UP_SECONDS * 1000
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i, () => false)))

  const apiMetrics = () => kubectl(['get', '--raw', '/metrics'])
  say(`${CLIENTS} clients for ${SECONDS} s`)
  const cpuBefore = cpuSnapshot()
  const servedBefore = servedRequests(apiMetrics())
  const simulatedBefore = simulated
  const t0 = performance.now()
  stopAt = Date.now() + SECONDS * 1000
  // The window's halves apart: a cost that grows with the run's length shows as a second half
  // slower than the first.
  let half: { at: number; jobs: number; cpu: CpuSnapshot } | undefined
  const halfTimer = setTimeout(
    () => (half = { at: performance.now(), jobs: latencies.length, cpu: cpuSnapshot() }),
    (SECONDS * 1000) / 2,
  )
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i, () => true)))
  clearTimeout(halfTimer)
  const seconds = (performance.now() - t0) / 1000
  clearInterval(progress)
  clearInterval(relist)
  stopping = true
  const cpuAfter = cpuSnapshot()
  const servedAfter = servedRequests(apiMetrics())
  const jobs = latencies.length
  const total = (byVerb: Map<string, number>) => [...byVerb.values()].reduce((a, b) => a + b, 0)
  const apiServerMs = (before: CpuSnapshot, after: CpuSnapshot, n: number) =>
    ((cpuShares(before, after, n).find(([k]) => k === 'host: kube-apiserver')?.[1] ?? 0) * 1000).toFixed(0)
  const halves = half
    ? `- halves of the window: ${(half.jobs / ((half.at - t0) / 1000)).toFixed(1)} then ${((jobs - half.jobs) / ((t0 + seconds * 1000 - half.at) / 1000)).toFixed(1)} jobs/s; the API server ${apiServerMs(cpuBefore, half.cpu, half.jobs)} then ${apiServerMs(half.cpu, cpuAfter, jobs - half.jobs)} CPU-ms a job`
    : '- halves of the window: not taken'

  const lines = [
    `### ${new Date().toISOString().slice(0, 10)}: ${NODES} simulated nodes, ${CLIENTS} clients over ${KEYS} keys, ${SLOTS} split-pdf slots, controller manager \`${KCM_FLAGS}\``,
    '',
    `- completed: **${(jobs / seconds).toFixed(1)} jobs/s** (${jobs} in ${seconds.toFixed(1)} s; ${simulated - simulatedBefore} pods run by the simulated runner); accept → succeeded p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms`,
    halves,
    `- failures: ${failures.size ? [...failures].map(([w, n]) => `${n} × ${w}`).join('; ') : 'none'}`,
    '',
    ...cpuSharesTable('CPU per completed job', cpuShares(cpuBefore, cpuAfter, jobs)),
    '',
    '| API requests per completed job (verb, resource) | per job |',
    '|---|---|',
    ...requestRows(servedBefore.byVerb, servedAfter.byVerb, jobs, 16),
    `| all | ${((total(servedAfter.byVerb) - total(servedBefore.byVerb)) / Math.max(1, jobs)).toFixed(1)} |`,
  ]
  const out = join(benchDir, 'result.md')
  writeFileSync(out, lines.join('\n') + '\n')
  console.log(lines.join('\n'))
  say(`written to ${out}`)
} finally {
  if (kwokPid) process.kill(kwokPid, 'SIGTERM')
  await platform.stop()
}
process.exit(0)
