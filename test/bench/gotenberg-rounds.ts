import { officeDocument } from '../support/fixtures.js'
import { percentile } from './percentile.js'

/**
 * The rounds of `make bench-gotenberg` (local platform) and `make bench-gotenberg-node` (real
 * node, pool mode), against any gateway with the Gotenberg routes on and a key of its own.
 */

const PAGE = '<!doctype html><html><body><h1>Invoice 2026-118</h1><p>Two lines of a small page.</p></body></html>'

export const OVERHEAD_HEADER =
  '| through | own route p50 ms | Gotenberg route p50 ms | own route outside its job p50 ms | Gotenberg route outside its job p50 ms | difference ms |\n|---|---|---|---|---|---|'
export const OFFICE_HEADER = '| /forms/libreoffice/convert | documents/s | converted | failed |\n|---|---|---|---|'

/** What a finished job's record says of its time: its acceptance and its timings. */
export interface JobTimes {
  id: string
  createdAt: string
  timings: { queueMs: number | null; upstreamMs: number | null; storageMs: number | null; totalMs: number }
}

/** A finished job's times, from its record. */
export async function jobTimes(gatewayUrl: string, key: string, jobId: string): Promise<JobTimes> {
  const res = await fetch(`${gatewayUrl}/v1/jobs/${jobId}`, { headers: { Authorization: `Bearer ${key}` } })
  return (await res.json()) as JobTimes
}

/** A finished job's time from accept to its end (its record's `timings.totalMs`). */
export async function jobTotalMs(gatewayUrl: string, key: string, jobId: string): Promise<number> {
  return (await jobTimes(gatewayUrl, key, jobId)).timings.totalMs
}

/**
 * What the adapter costs: the same small page rendered `calls` times each way, alternating:
 * through `/forms/chromium/convert/html` (index.html as a file part) and through dutil's own
 * one-call route (`/v1/utilities/html-pdf` with the page as a `file` part, answered as the PDF).
 * Each call's time outside its job is its wall time less the job's totalMs (accepted →
 * succeeded, from the job record): the route's own work, without the run's noise. A table row.
 */
export async function routeOverhead(gatewayUrl: string, key: string, calls: number, label: string): Promise<string> {
  const auth = { Authorization: `Bearer ${key}` }
  const totalMs = (jobId: string) => jobTotalMs(gatewayUrl, key, jobId)
  const call = async (url: string, form: FormData, headers: Record<string, string> = {}) => {
    const t = performance.now()
    const res = await fetch(url, { method: 'POST', headers: { ...auth, ...headers }, body: form })
    const bytes = Buffer.from(await res.arrayBuffer())
    const wall = performance.now() - t
    if (res.status !== 200 || bytes.subarray(0, 5).toString() !== '%PDF-')
      throw new Error(`${url}: ${res.status} ${bytes.subarray(0, 300).toString()}`)
    return { wall, outside: wall - (await totalMs(res.headers.get('dutil-job-id')!)) }
  }
  const gotenberg = () => {
    const form = new FormData()
    form.append('files', new Blob([PAGE]), 'index.html')
    return call(`${gatewayUrl}/forms/chromium/convert/html`, form)
  }
  const own = () => {
    const form = new FormData()
    form.append('file', new Blob([PAGE], { type: 'text/html' }), 'index.html')
    return call(`${gatewayUrl}/v1/utilities/html-pdf`, form, { Accept: 'application/pdf' })
  }
  const times = {
    gotenberg: { wall: [] as number[], outside: [] as number[] },
    own: { wall: [] as number[], outside: [] as number[] },
  }
  for (let i = 0; i < 3; i++) await Promise.all([gotenberg(), own()])
  for (let i = 0; i < calls; i++) {
    const order = i % 2 ? (['gotenberg', 'own'] as const) : (['own', 'gotenberg'] as const)
    for (const name of order) {
      const r = await (name === 'gotenberg' ? gotenberg() : own())
      times[name].wall.push(r.wall)
      times[name].outside.push(r.outside)
    }
  }
  const p50 = (xs: number[]) => percentile(xs, 50)
  return `| ${label}, ${calls} each | ${p50(times.own.wall).toFixed(0)} | ${p50(times.gotenberg.wall).toFixed(0)} | ${p50(times.own.outside).toFixed(1)} | ${p50(times.gotenberg.outside).toFixed(1)} | ${(p50(times.gotenberg.outside) - p50(times.own.outside)).toFixed(1)} |`
}

/**
 * office-pdf through `/forms/libreoffice/convert`: `clients` at once for `seconds`, each converting
 * the 1-page docx one request after another. Documents a second and failures, as a table row.
 */
export async function officeClients(
  gatewayUrl: string,
  key: string,
  clients: number,
  seconds: number,
  label: string,
): Promise<string> {
  const docx = officeDocument('text.docx')
  let done = 0
  let failed = 0
  const failures = new Map<number, number>()
  const until = performance.now() + seconds * 1000
  const client = async () => {
    while (performance.now() < until) {
      const form = new FormData()
      form.append('files', new Blob([docx]), 'text.docx')
      const res = await fetch(`${gatewayUrl}/forms/libreoffice/convert`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}` },
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
  await Promise.all(Array.from({ length: clients }, client))
  const took = (performance.now() - started) / 1000
  const why = failures.size ? ` (${[...failures].map(([s, n]) => `${n}× ${s}`).join(', ')})` : ''
  return `| ${label}, 1-page docx, ${clients} clients, ${seconds} s | ${(done / took).toFixed(2)} | ${done} | ${failed}${why} |`
}
