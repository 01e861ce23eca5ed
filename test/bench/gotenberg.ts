import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'
import { officeDocument } from '../support/fixtures.js'
import { percentile } from './percentile.js'

/**
 * `make bench-gotenberg`: dutil's Gotenberg routes on the local platform, side by side in one run.
 *
 * 1. What the adapter costs: the same small page rendered BENCH_GOTENBERG_CALLS times each way,
 *    alternating: through `/forms/chromium/convert/html` (index.html as a file part) and through
 *    dutil's own one-call route (`/v1/utilities/html-pdf` with the page as a `file` part, answered
 *    as the PDF). Each call's time outside its job is its wall time less the job's totalMs
 *    (accepted → succeeded, from the job record): the route's own work, without the run's noise.
 *    p50 of both and of the wall times.
 * 2. office-pdf through `/forms/libreoffice/convert`: BENCH_GOTENBERG_CLIENTS clients at once for
 *    BENCH_GOTENBERG_SECONDS, each converting the 1-page docx one request after another: documents
 *    a second and failures. (`make bench-gotenberg` then runs `bench-office` with as many clients:
 *    unoserver's one warm LibreOffice, Gotenberg's way, on the same machine.)
 *
 *   BENCH_GOTENBERG_CALLS=40  BENCH_GOTENBERG_CLIENTS=10  BENCH_GOTENBERG_SECONDS=30
 */
const CALLS = Number(process.env.BENCH_GOTENBERG_CALLS ?? 40)
const CLIENTS = Number(process.env.BENCH_GOTENBERG_CLIENTS ?? 10)
const SECONDS = Number(process.env.BENCH_GOTENBERG_SECONDS ?? 30)
const PAGE = '<!doctype html><html><body><h1>Invoice 2026-118</h1><p>Two lines of a small page.</p></body></html>'

const platform = await startPlatform({
  dir: join(REPO_ROOT, '.bench'),
  ports: TEST_PORTS,
  fresh: true,
  allowLoopbackUrls: true,
  testHooks: false,
})
try {
  const kc = new KubeConfig()
  kc.loadFromFile(platform.kubeconfigPath)
  const { key } = await new ApiKeyAdmin(kc, 'dutil').create({
    name: 'bench-gotenberg',
    utilities: [],
    rateLimitPerMinute: 100_000_000,
  })
  const auth = { Authorization: `Bearer ${key}` }
  const totalMs = async (jobId: string) => {
    const res = await fetch(`${platform.gatewayUrl}/v1/jobs/${jobId}`, { headers: auth })
    return ((await res.json()) as { timings: { totalMs: number } }).timings.totalMs
  }
  /** One call: its wall time, and the part of it outside its job. */
  const call = async (url: string, form: FormData, headers: Record<string, string> = {}) => {
    const t = performance.now()
    const res = await fetch(url, { method: 'POST', headers: { ...auth, ...headers }, body: form })
    const bytes = Buffer.from(await res.arrayBuffer())
    const wall = performance.now() - t
    if (res.status !== 200 || bytes.subarray(0, 5).toString() !== '%PDF-')
      throw new Error(`${url}: ${res.status} ${bytes.subarray(0, 300).toString()}`)
    const jobId = res.headers.get('dutil-job-id')!
    return { wall, outside: wall - (await totalMs(jobId)) }
  }
  const gotenberg = () => {
    const form = new FormData()
    form.append('files', new Blob([PAGE]), 'index.html')
    return call(`${platform.gatewayUrl}/forms/chromium/convert/html`, form)
  }
  const own = () => {
    const form = new FormData()
    form.append('file', new Blob([PAGE], { type: 'text/html' }), 'index.html')
    return call(`${platform.gatewayUrl}/v1/utilities/html-pdf`, form, { Accept: 'application/pdf' })
  }
  const times = {
    gotenberg: { wall: [] as number[], outside: [] as number[] },
    own: { wall: [] as number[], outside: [] as number[] },
  }
  for (let i = 0; i < 3; i++) await Promise.all([gotenberg(), own()])
  for (let i = 0; i < CALLS; i++) {
    const order = i % 2 ? (['gotenberg', 'own'] as const) : (['own', 'gotenberg'] as const)
    for (const name of order) {
      const r = await (name === 'gotenberg' ? gotenberg() : own())
      times[name].wall.push(r.wall)
      times[name].outside.push(r.outside)
    }
  }
  const p50 = (xs: number[]) => percentile(xs, 50)
  const overheadRow = `| html-pdf, a small page, sync, ${CALLS} each | ${p50(times.own.wall).toFixed(0)} | ${p50(times.gotenberg.wall).toFixed(0)} | ${p50(times.own.outside).toFixed(1)} | ${p50(times.gotenberg.outside).toFixed(1)} | ${(p50(times.gotenberg.outside) - p50(times.own.outside)).toFixed(1)} |`
  console.log(overheadRow)

  // 2. office-pdf, many clients at once.
  const docx = officeDocument('text.docx')
  let done = 0
  let failed = 0
  const failures = new Map<number, number>()
  const until = performance.now() + SECONDS * 1000
  const client = async () => {
    while (performance.now() < until) {
      const form = new FormData()
      form.append('files', new Blob([docx]), 'text.docx')
      const res = await fetch(`${platform.gatewayUrl}/forms/libreoffice/convert`, {
        method: 'POST',
        headers: auth,
        body: form,
      })
      const bytes = Buffer.from(await res.arrayBuffer())
      if (res.status === 200 && bytes.subarray(0, 5).toString() === '%PDF-') done++
      else {
        failed++
        failures.set(res.status, (failures.get(res.status) ?? 0) + 1)
      }
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: CLIENTS }, client))
  const seconds = (performance.now() - started) / 1000
  const officeRow = `| office-pdf, 1-page docx, ${CLIENTS} clients, ${SECONDS} s | ${(done / seconds).toFixed(2)} | ${done} | ${failed}${failures.size ? ` (${[...failures].map(([s, n]) => `${n}× ${s}`).join(', ')})` : ''} |`
  console.log(officeRow)

  console.log(
    `\n| through | own route p50 ms | Gotenberg route p50 ms | own route outside its job p50 ms | Gotenberg route outside its job p50 ms | difference ms |\n|---|---|---|---|---|---|\n${overheadRow}`,
  )
  console.log(`\n| /forms/libreoffice/convert | documents/s | converted | failed |\n|---|---|---|---|\n${officeRow}`)
} finally {
  await platform.stop()
}
