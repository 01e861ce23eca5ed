import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, inject, it } from 'vitest'
import { ONE_CALL_HEADER, oneCallRound } from '../bench/one-call-rounds.js'
import { createKey } from '../integration/helpers/keys.js'
import { REPO_ROOT } from '../platform/platform.js'
import { makePdf } from '../support/pdfs.js'
import { poolOff, poolOn, putFile } from './helpers.js'

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
        const pooled = await oneCallRound(
          inject('gatewayUrl'),
          key,
          pdf,
          url,
          CALLS,
          `split-pdf, 2 pages, sync, pool of ${POOL}`,
        )
        await poolOff('split-pdf')
        const jobMode = await oneCallRound(
          inject('gatewayUrl'),
          key,
          pdf,
          url,
          CALLS,
          'split-pdf, 2 pages, sync, job mode',
        )
        const report = `${ONE_CALL_HEADER}\n${pooled}\n${jobMode}\n`
        console.log(report)
        writeFileSync(join(REPO_ROOT, '.test-results.uploads-bench.md'), report)
      },
    )
  },
)
