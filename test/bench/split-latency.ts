import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import { ApiKeyAdmin } from '../../contract/api-key-admin.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'

/**
 * `make bench`: latency from accept to succeeded for a 10-page split-pdf, 20 runs one after
 * another on the real local platform. Reports the job's own totalMs and what a client sees
 * (POST async, then GET ?wait=60 until it returns the finished job).
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 20)
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]

const platform = await startPlatform({ dir: join(REPO_ROOT, '.bench'), ports: TEST_PORTS, fresh: true, allowLoopbackUrls: true, testHooks: false })
const files = await new FileServer().start()
try {
  const kc = new KubeConfig()
  kc.loadFromFile(platform.kubeconfigPath)
  const { key } = await new ApiKeyAdmin(kc, 'dutil').create({ name: 'bench', utilities: [] })
  const url = files.add('ten.pdf', await makePdf(10))
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }
  const total: number[] = []
  const client: number[] = []
  for (let i = 0; i < RUNS + 1; i++) {
    const t0 = performance.now()
    const created: any = await (await fetch(`${platform.gatewayUrl}/v1/utilities/split-pdf/jobs`, { method: 'POST', headers, body: JSON.stringify({ input: { url } }) })).json()
    const done: any = await (await fetch(`${platform.gatewayUrl}/v1/jobs/${created.id}?wait=60`, { headers })).json()
    const t1 = performance.now()
    if (done.status !== 'succeeded') throw new Error(`run ${i} ended ${done.status}: ${JSON.stringify(done.error)}`)
    if (i === 0) continue // warm-up
    total.push(done.timings.totalMs)
    client.push(Math.round(t1 - t0))
  }
  const line = (name: string, xs: number[]) => `${name.padEnd(34)} p50 ${pct(xs, 50)} ms   p90 ${pct(xs, 90)} ms   max ${Math.max(...xs)} ms`
  console.log(`split-pdf, 10 pages, ${RUNS} runs (after one warm-up)`)
  console.log(line('accept → succeeded (job totalMs)', total))
  console.log(line('client POST → finished job', client))
} finally {
  await files.stop()
  await platform.stop()
}
