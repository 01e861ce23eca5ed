import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, inject, it } from 'vitest'
import { OFFICE_HEADER, officeClients, OVERHEAD_HEADER, routeOverhead } from '../bench/gotenberg-rounds.js'
import { createKey } from '../integration/helpers/keys.js'
import { REPO_ROOT } from '../platform/platform.js'
import { poolOff, poolOn } from './helpers.js'

/**
 * `make bench-gotenberg-node`: the Gotenberg routes on the real node in pool mode
 * (test/bench/gotenberg-rounds.ts): what the adapter adds to a pooled small html-pdf beside dutil's
 * own one-call route, outside the job; then office-pdf through /forms/libreoffice/convert with
 * BENCH_GOTENBERG_CLIENTS clients at once on a pool of BENCH_GOTENBERG_OFFICE_POOL. Printed and
 * written to .test-results.gotenberg-bench.md, never asserted: timing is for benchmarks.
 */
const CALLS = Number(process.env.BENCH_GOTENBERG_CALLS ?? 40)
const CLIENTS = Number(process.env.BENCH_GOTENBERG_CLIENTS ?? 10)
const SECONDS = Number(process.env.BENCH_GOTENBERG_SECONDS ?? 30)
const OFFICE_POOL = Number(process.env.BENCH_GOTENBERG_OFFICE_POOL ?? 2)

describe.skipIf(inject('nodeBlocker') || !process.env.DUTIL_NODE_GOTENBERG_BENCH)(
  'the Gotenberg routes on a real node, pool mode',
  () => {
    it(
      'measures the route against the own one-call route, and office-pdf with many clients',
      { timeout: 900_000 },
      async () => {
        const { key } = await createKey({ rateLimitPerMinute: 100_000 })
        await poolOn('html-pdf', 4)
        const overhead = await routeOverhead(
          inject('gatewayUrl'),
          key,
          CALLS,
          'html-pdf, a small page, sync, pool of 4',
        )
        await poolOff('html-pdf')
        await poolOn('office-pdf', OFFICE_POOL)
        const office = await officeClients(
          inject('gatewayUrl'),
          key,
          CLIENTS,
          SECONDS,
          `office-pdf, pool of ${OFFICE_POOL}`,
        )
        await poolOff('office-pdf')
        const report = `${OVERHEAD_HEADER}\n${overhead}\n\n${OFFICE_HEADER}\n${office}\n`
        console.log(report)
        writeFileSync(join(REPO_ROOT, '.test-results.gotenberg-bench.md'), report)
      },
    )
  },
)
