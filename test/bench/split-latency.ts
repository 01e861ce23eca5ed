import { join } from 'node:path'
import {
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node'
import pino from 'pino'
import { API_GROUP, API_VERSION, LABELS, UTILITY_JOB } from '../../contract/api-group.js'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { objectNameOf } from '../../contract/ids.js'
import { watchEvents } from '../../platform/kube.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { NAMESPACE, REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'
import { percentile } from './percentile.js'

/**
 * `make bench-latency`: latency from accept to succeeded for a 10-page split-pdf, 20 runs one
 * after another on the real local platform. Reports the job's own totalMs and what a client sees
 * (POST async, then GET ?wait=60 until it returns the finished job), and a trace of where the
 * time goes: three watches (UtilityJobs, batch Jobs, Pods) note when each step of every job
 * became visible, in ms after the client's POST was answered.
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 20)

/** The steps of one job, in order, as the watches see them. */
const STEPS = [
  'UtilityJob created',
  'batch Job created',
  'Pod created',
  'Pod bound to the node',
  'runner running',
  'runner exited 0',
  'UtilityJob succeeded',
] as const
type Step = (typeof STEPS)[number]

const seen = new Map<string, Partial<Record<Step, number>>>()
const note = (name: string | undefined, step: Step) => {
  if (!name) return
  const steps = seen.get(name) ?? {}
  steps[step] ??= performance.now()
  seen.set(name, steps)
}

const platform = await startPlatform({
  dir: join(REPO_ROOT, '.bench'),
  ports: TEST_PORTS,
  fresh: true,
  allowLoopbackUrls: true,
  testHooks: false,
})
const files = await new FileServer().start()
const kc = new KubeConfig()
kc.loadFromFile(platform.kubeconfigPath)
const log = pino({ level: 'warn' })
const watches = [
  watchEvents<UtilityJobResource>(
    kc,
    `/apis/${API_GROUP}/${API_VERSION}/namespaces/${NAMESPACE}/${UTILITY_JOB.plural}`,
    (limit) =>
      kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: NAMESPACE,
        plural: UTILITY_JOB.plural,
        limit,
      }) as never,
    log,
    {
      onEvent: (_e, uj) => {
        note(uj.metadata.name, 'UtilityJob created')
        if (uj.status?.state === 'succeeded') note(uj.metadata.name, 'UtilityJob succeeded')
      },
      onResync: () => {},
    },
  ),
  watchEvents<V1Job & KubernetesObject>(
    kc,
    `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
    (limit) => kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NAMESPACE, limit }),
    log,
    {
      onEvent: (_e, job) => {
        const name = job.metadata?.labels?.[LABELS.jobId]
        note(name, 'batch Job created')
      },
      onResync: () => {},
    },
  ),
  watchEvents<V1Pod & KubernetesObject>(
    kc,
    `/api/v1/namespaces/${NAMESPACE}/pods`,
    (limit) => kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NAMESPACE, limit }),
    log,
    {
      onEvent: (_e, pod) => {
        const name = pod.metadata?.labels?.[LABELS.jobId]
        note(name, 'Pod created')
        if (pod.spec?.nodeName) note(name, 'Pod bound to the node')
        const state = pod.status?.containerStatuses?.[0]?.state
        if (state?.running || state?.terminated) note(name, 'runner running')
        if (state?.terminated?.exitCode === 0) note(name, 'runner exited 0')
      },
      onResync: () => {},
    },
  ),
]
try {
  await Promise.all(watches.map((w) => w.synced))
  const { key } = await new ApiKeyAdmin(kc, 'dutil').create({ name: 'bench', utilities: [] })
  const url = files.add('ten.pdf', await makePdf(10))
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }
  const total: number[] = []
  const client: number[] = []
  const trace = new Map<Step, number[]>(STEPS.map((s) => [s, []]))
  for (let i = 0; i < RUNS + 1; i++) {
    const t0 = performance.now()
    const res = await fetch(`${platform.gatewayUrl}/v1/utilities/split-pdf/jobs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ input: { url } }),
    })
    const accepted = performance.now()
    const created: any = await res.json()
    const done: any = await (await fetch(`${platform.gatewayUrl}/v1/jobs/${created.id}?wait=60`, { headers })).json()
    const t1 = performance.now()
    if (done.status !== 'succeeded') throw new Error(`run ${i} ended ${done.status}: ${JSON.stringify(done.error)}`)
    if (i === 0) continue // warm-up
    total.push(done.timings.totalMs)
    client.push(Math.round(t1 - t0))
    const steps = seen.get(objectNameOf(created.id)) ?? {}
    for (const s of STEPS) if (steps[s] !== undefined) trace.get(s)!.push(Math.round(steps[s]! - accepted))
  }
  const line = (name: string, xs: number[]) =>
    `${name.padEnd(34)} p50 ${percentile(xs, 50)} ms   p90 ${percentile(xs, 90)} ms   max ${Math.max(...xs)} ms`
  console.log(`split-pdf, 10 pages, ${RUNS} runs (after one warm-up)`)
  console.log(line('accept → succeeded (job totalMs)', total))
  console.log(line('client POST → finished job', client))
  console.log('\ntrace: when each step became visible to a watch, ms after the POST was answered (p50, p90)')
  let previous = 0
  for (const s of STEPS) {
    const xs = trace.get(s)!
    if (xs.length === 0) {
      console.log(`  ${s.padEnd(24)} (not seen)`)
      continue
    }
    const p50 = percentile(xs, 50)
    console.log(
      `  ${s.padEnd(24)} ${String(p50).padStart(6)} ${String(percentile(xs, 90)).padStart(6)}   (+${p50 - previous})`,
    )
    previous = p50
  }
} finally {
  await Promise.all(watches.map((w) => w.stop()))
  await files.stop()
  await platform.stop()
}
