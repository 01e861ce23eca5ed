import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, inject, it } from 'vitest'
import { ONE_CALL_HEADER, oneCallRound } from '../bench/one-call-rounds.js'
import { createKey } from '../integration/helpers/keys.js'
import { REPO_ROOT } from '../platform/platform.js'
import { makePdf } from '../support/pdfs.js'
import { operatorTimes } from '../bench/job-timeline.js'
import type { JobTimes } from '../bench/gotenberg-rounds.js'
import { percentile } from '../bench/percentile.js'
import { kubectl, poolOff, poolOn, putFile } from './helpers.js'
import { NS } from './chart-values.js'

/**
 * `make bench-uploads-node`: what the file in the request adds to a small split-pdf on the real
 * node (test/bench/one-call-rounds.ts), pooled (a pool of BENCH_ONE_CALL_POOL) and in job mode,
 * against the same job from a URL on the tests' file server. Printed and written to
 * .test-results.uploads-bench.md, never asserted: timing is for benchmarks.
 */
const CALLS = Number(process.env.BENCH_ONE_CALL_CALLS ?? 40)
const POOL = Number(process.env.BENCH_ONE_CALL_POOL ?? 2)

describe.skipIf(inject('nodeBlocker') || !process.env.DUTIL_NODE_UPLOADS_BENCH)(
  'the file in the request on a real node',
  () => {
    it(
      'measures a one-call split-pdf against the same job from a URL, pooled and in job mode',
      { timeout: 900_000 },
      async () => {
        const { key } = await createKey({ rateLimitPerMinute: 100_000 })
        const pdf = await makePdf(2)
        const url = await putFile('one-call.pdf', pdf)
        await poolOn('split-pdf', POOL)
        const jobs = { url: [] as JobTimes[], file: [] as JobTimes[] }
        const pooled = await oneCallRound(
          inject('gatewayUrl'),
          key,
          pdf,
          url,
          CALLS,
          `split-pdf, 2 pages, sync, pool of ${POOL}`,
          jobs,
        )
        const handOver = handOverRows(jobs)
        await poolOff('split-pdf')
        const jobMode = await oneCallRound(
          inject('gatewayUrl'),
          key,
          pdf,
          url,
          CALLS,
          'split-pdf, 2 pages, sync, job mode',
        )
        const report = `${ONE_CALL_HEADER}\n${pooled}\n${jobMode}\n\n${handOver}\n`
        console.log(report)
        writeFileSync(join(REPO_ROOT, '.test-results.uploads-bench.md'), report)
      },
    )
  },
)

const HANDED = 'job handed to pool pod'
const CREATED = 'job accepted'

/**
 * The pooled jobs' time inside the cluster, each way, from the gateway's and the operator's logs:
 * accepted → its UtilityJob created → handed to its pool pod → its outcome written (p50 ms).
 */
function handOverRows(jobs: { url: JobTimes[]; file: JobTimes[] }): string {
  const logOf = (component: string) =>
    kubectl(['-n', NS, 'logs', '-l', `app.kubernetes.io/component=${component}`, '--tail=-1'])
  const logged = operatorTimes(logOf('operator'), [HANDED, 'status written'])
  const created = operatorTimes(logOf('gateway'), [CREATED])
  const row = (name: 'url' | 'file') => {
    const toCreated: number[] = []
    const toHanded: number[] = []
    const toWritten: number[] = []
    for (const job of jobs[name]) {
      const accepted = Date.parse(job.createdAt)
      const ops = logged.get(job.id) ?? {}
      const made = created.get(job.id)?.[CREATED]
      if (made !== undefined) toCreated.push(made - accepted)
      if (ops[HANDED] !== undefined && made !== undefined) toHanded.push(ops[HANDED] - made)
      if (ops[HANDED] !== undefined && ops['status written'] !== undefined)
        toWritten.push(ops['status written'] - ops[HANDED])
    }
    const cell = (xs: number[]) => `${percentile(xs, 50)} (${xs.length})`
    return `| ${name === 'url' ? 'from a URL' : 'file in the request'} | ${cell(toCreated)} | ${cell(toHanded)} | ${cell(toWritten)} |`
  }
  return [
    '| pooled jobs, p50 ms (jobs logged) | accepted → its UtilityJob created (the gateway) | → handed to its pool pod (the operator) | handed → its outcome written |',
    '|---|---|---|---|',
    row('url'),
    row('file'),
  ].join('\n')
}
