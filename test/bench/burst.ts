import { cpuTimes } from './cpu-shares.js'

export const percentile = (xs: number[], p: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN

export interface BurstResult {
  /** accept → succeeded (the job's totalMs) of every job that succeeded. */
  totals: number[]
  failed: number
  wallSeconds: number
  /** The machine's CPU busy share over the run (0..1). */
  busy: number
  /** The job that took longest from acceptance to success, as the API showed it at its end. */
  slowest?: SeenJob
  /** The first few jobs that did not succeed, as the API showed them at their end. */
  failures: SeenJob[]
}

/** A job as the bench's client sees it from the API. */
interface SeenJob {
  id: string
  status: string
  timings: { totalMs: number } & Record<string, number | null>
  error?: { code: string; message: string } | null
}

/**
 * `concurrency` clients, each submitting a small async job and following it to its end (POST,
 * then GET ?wait=60), one after another for `seconds`, spread over `keys` (so that no key's
 * share of the run slots caps the run), after one warm-up job.
 */
export async function burst(o: {
  gatewayUrl: string
  slug: string
  input: unknown
  keys: string[]
  seconds: number
  concurrency: number
}): Promise<BurstResult> {
  await runOne(o.gatewayUrl, o.slug, o.input, o.keys[0])
  const totals: number[] = []
  let failed = 0
  const failures: SeenJob[] = []
  let slowest: BurstResult['slowest']
  const cpu0 = cpuTimes()
  const t0 = performance.now()
  const end = t0 + o.seconds * 1000
  await Promise.all(
    Array.from({ length: o.concurrency }, async (_, w) => {
      for (let n = 0; performance.now() < end; n++) {
        const job = await runOne(o.gatewayUrl, o.slug, o.input, o.keys[(w + n) % o.keys.length])
        if (job.status !== 'succeeded') {
          failed++
          if (failures.length < 3) failures.push(job)
        } else {
          totals.push(job.timings.totalMs)
          if (!slowest || job.timings.totalMs > (slowest.timings.totalMs ?? 0)) slowest = job
        }
      }
    }),
  )
  const wallSeconds = (performance.now() - t0) / 1000
  const cpu1 = cpuTimes()
  return { totals, failed, wallSeconds, busy: (cpu1.busy - cpu0.busy) / (cpu1.total - cpu0.total), slowest, failures }
}

/** One row of docs/benchmarks.md's throughput table. */
export function burstRow(slug: string, r: BurstResult, slots: number | string): string {
  const failed = r.failed ? ` (+${r.failed} failed)` : ''
  return `| ${slug} | ${r.totals.length}${failed} | ${r.wallSeconds.toFixed(1)} s | **${(r.totals.length / r.wallSeconds).toFixed(2)}** | ${percentile(r.totals, 50)} / ${percentile(r.totals, 99)} ms | ${(r.busy * 100).toFixed(0)} % | ${slots} |`
}

export const BURST_TABLE_HEADER = [
  '| work | jobs | wall | completed jobs/s | accept → succeeded p50 / p99 | CPU busy | run slots |',
  '|---|---|---|---|---|---|---|',
]

async function runOne(gatewayUrl: string, slug: string, input: unknown, key: string): Promise<SeenJob> {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }
  const res = await fetch(`${gatewayUrl}/v1/utilities/${slug}/jobs`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ input }),
  })
  let job = (await res.json()) as SeenJob
  if (res.status !== 202) throw new Error(`${slug}: HTTP ${res.status} ${JSON.stringify(job)}`)
  while (!['succeeded', 'failed', 'cancelled'].includes(job.status))
    job = (await (await fetch(`${gatewayUrl}/v1/jobs/${job.id}?wait=60`, { headers })).json()) as typeof job
  return job
}
