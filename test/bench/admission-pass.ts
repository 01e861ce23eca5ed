import pino from 'pino'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { Admission } from '../../operator/admission.js'

/**
 * `make bench-admission`: the operator's admission pass at queue depth (docs/benchmarks.md). A
 * pass runs whenever a job arrives or ends (debounced), so at 20,000 queued jobs its cost is paid
 * per job. Each row: one utility with SLOTS slots all taken; every pass frees one (a job ends),
 * the pass admits one, and its Job appears; the CPU time of a pass and the operator's heap.
 *
 *   BENCH_ADMISSION_DEPTHS=0,1000,5000,20000 (default)   BENCH_ADMISSION_TENANTS=1,16 (default)
 */
const DEPTHS = (process.env.BENCH_ADMISSION_DEPTHS ?? '0,1000,5000,20000').split(',').map(Number)
const TENANTS = (process.env.BENCH_ADMISSION_TENANTS ?? '1,16').split(',').map(Number)
const SLOTS = 6
const PASSES = Number(process.env.BENCH_ADMISSION_PASSES ?? 200)

const job = (i: number, tenant: number, running: boolean): UtilityJobResource => ({
  apiVersion: 'dutil.io/v1alpha1',
  kind: 'UtilityJob',
  metadata: { name: `job-${i}`, namespace: 'dutil', resourceVersion: String(i) },
  spec: {
    jobId: `job_${String(i).padStart(26, '0')}`,
    utility: 'split-pdf',
    mode: 'async',
    apiKeyId: `key_${tenant}`,
    apiKeyName: `key ${tenant}`,
    createdAt: new Date(1_790_000_000_000 + i).toISOString(),
    inputKey: `_jobs/${i}/input.json`,
    metadata: null,
  },
  ...(running
    ? {
        status: {
          state: 'running' as const,
          startedAt: new Date(1_790_000_000_000 + i).toISOString(),
          finishedAt: null,
          timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: null },
          result: null,
          error: null,
        },
      }
    : {}),
})

function row(depth: number, tenants: number): { passMs: number; p90Ms: number; heapMb: number } {
  // Running jobs first (oldest), then the queue; tenants take turns in arrival order.
  const jobs = new Map<string, UtilityJobResource>()
  const withJob = new Set<string>()
  for (let i = 0; i < SLOTS + depth; i++) {
    const uj = job(i, i % tenants, i < SLOTS)
    jobs.set(uj.metadata.name, uj)
    if (i < SLOTS) withJob.add(uj.metadata.name)
  }
  const admission = new Admission({
    limitOf: () => SLOTS,
    share: 0.5,
    list: () => [...jobs.values()],
    hasJob: (uj) => withJob.has(uj.metadata.name),
    enqueue: () => {},
    log: pino({ level: 'silent' }),
  })
  admission.pass()
  const times: number[] = []
  let next = SLOTS + depth
  for (let p = 0; p < PASSES + 20; p++) {
    // One running job ends (leaves the list), a new one arrives at the back of the queue.
    const done = withJob.values().next().value!
    withJob.delete(done)
    jobs.delete(done)
    const uj = job(next, next % tenants, false)
    jobs.set(uj.metadata.name, uj)
    next++
    const t0 = process.cpuUsage()
    const admitted = admission.pass()
    const used = process.cpuUsage(t0)
    if (p >= 20) times.push((used.user + used.system) / 1000)
    for (const v of admitted) withJob.add(v.name)
  }
  times.sort((a, b) => a - b)
  return {
    passMs: times[Math.floor(times.length / 2)],
    p90Ms: times[Math.floor(times.length * 0.9)],
    heapMb: process.memoryUsage().heapUsed / 2 ** 20,
  }
}

console.log(`| queued | tenants | CPU per pass, p50 (ms) | p90 (ms) | heap (MB) |`)
console.log(`|---:|---:|---:|---:|---:|`)
for (const depth of DEPTHS)
  for (const tenants of TENANTS) {
    const r = row(depth, tenants)
    console.log(
      `| ${depth.toLocaleString('en')} | ${tenants} | ${r.passMs.toFixed(2)} | ${r.p90Ms.toFixed(2)} | ${r.heapMb.toFixed(0)} |`,
    )
  }
