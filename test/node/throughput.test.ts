import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { createKey } from '../integration/helpers/keys.js'
import { REPO_ROOT } from '../platform/platform.js'
import { makePdf } from '../support/pdfs.js'
import { burst, burstRow, BURST_TABLE_HEADER, percentile } from '../bench/burst.js'
import { NS, RELEASE } from './chart-values.js'
import { kubectl, putFile } from './helpers.js'

/**
 * `make bench-throughput-node`: `make bench-throughput`'s bursts on the real node (kubelet +
 * containerd + runc, the chart's first release): for each utility, BENCH_CONCURRENCY clients
 * (default 16) follow small async jobs to their end for BENCH_SECONDS (default 60), over
 * BENCH_KEYS keys (default 8). Printed and written to .test-results.node-throughput.md, never
 * asserted beyond every job succeeding: timing is for benchmarks. Runs only when
 * DUTIL_NODE_THROUGHPUT is set (the Makefile target sets it).
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const KEYS = Number(process.env.BENCH_KEYS ?? 8)

describe.skipIf(inject('nodeBlocker') || !process.env.DUTIL_NODE_THROUGHPUT)(
  'throughput of small jobs on a real node',
  () => {
    it(`sustains bursts of ${CONCURRENCY} clients for ${SECONDS} s per utility and reports completed jobs per second`, async () => {
      const keys: string[] = []
      for (let i = 0; i < KEYS; i++) keys.push((await createKey({ rateLimitPerMinute: 100_000 })).key)
      const inputs: Record<string, unknown> = {
        'split-pdf': { url: await putFile('throughput-ten.pdf', await makePdf(10)) },
        'html-pdf': { url: await putFile('throughput.html', '<h1>Invoice 1</h1><p>One small page.</p>') },
      }
      // The run slots of each utility, as the chart gave them to the operator.
      const slots = Object.fromEntries(
        kubectl([
          '-n',
          NS,
          'get',
          'deployment',
          `${RELEASE}-operator`,
          '-o',
          'jsonpath={.spec.template.spec.containers[0].env[?(@.name=="DUTIL_UTILITY_CONCURRENCY")].value}',
        ])
          .split(',')
          .map((pair) => pair.split('=')),
      ) as Record<string, string>
      const rows: string[] = []
      for (const [slug, input] of Object.entries(inputs)) {
        const result = await burst({
          gatewayUrl: inject('gatewayUrl'),
          slug,
          input,
          keys,
          seconds: SECONDS,
          concurrency: CONCURRENCY,
        })
        rows.push(burstRow(slug, result, slots[slug] ?? '?'))
        process.stdout.write(`[real-node] ${rows.at(-1)}\n`)
        expect(result.failed, slug).toBe(0)
        expect(result.totals.length, slug).toBeGreaterThan(0)
        expect(percentile(result.totals, 50), slug).toBeGreaterThan(0)
      }
      const report = [
        `make bench-throughput-node: ${CONCURRENCY} clients, ${KEYS} keys, ${SECONDS} s per utility (real node)`,
        '',
        ...BURST_TABLE_HEADER,
        ...rows,
        '',
      ].join('\n')
      process.stdout.write(`[real-node] ${report.replace(/\n/g, '\n[real-node] ')}\n`)
      writeFileSync(join(REPO_ROOT, '.test-results.node-throughput.md'), report)
    })
  },
)
