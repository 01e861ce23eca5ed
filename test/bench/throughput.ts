import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import { PDFDocument } from 'pdf-lib'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { catalog } from '../../runners/catalog.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'
import { burst, burstRow, BURST_TABLE_HEADER } from './burst.js'
import { cpuShares, cpuSharesTable, cpuSnapshot } from './cpu-shares.js'

/**
 * `make bench-throughput` (the dev node agent tier): what small jobs cost in completed jobs per
 * second. For each utility, BENCH_CONCURRENCY clients (default 16) submit small async jobs and
 * follow each to its end (POST, then GET ?wait=60) for BENCH_SECONDS (default 60), spread over
 * BENCH_KEYS keys (default 8, so that no key's share of the slots caps the run). Reported: jobs
 * completed per second of wall time, accept → succeeded (the job's totalMs) p50 and p99, and the
 * machine's CPU busy share over the run (/proc/stat), and where that CPU went per completed job.
 * Beside it, the in-process anchor: the same split done by pdf-lib in this process, one core, no
 * storage.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const KEYS = Number(process.env.BENCH_KEYS ?? 8)
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null
const platform = await startPlatform({
  dir: join(REPO_ROOT, '.bench'),
  ports: TEST_PORTS,
  fresh: true,
  allowLoopbackUrls: true,
  testHooks: false,
})
const files = await new FileServer().start()
const rows: string[] = []
const profiles: string[] = []
try {
  const kc = new KubeConfig()
  kc.loadFromFile(platform.kubeconfigPath)
  const admin = new ApiKeyAdmin(kc, 'dutil')
  const keys: string[] = []
  for (let i = 0; i < KEYS; i++)
    keys.push((await admin.create({ name: `bench-${i}`, utilities: [], rateLimitPerMinute: 100_000 })).key)
  const tenPages = await makePdf(10)
  const inputs: Record<string, unknown> = {
    'split-pdf': { url: files.add('ten.pdf', tenPages) },
    'html-pdf': {
      url: files.add('small.html', Buffer.from('<h1>Invoice 1</h1><p>One small page.</p>'), 'text/html'),
    },
  }

  for (const [slug, input] of Object.entries(inputs)) {
    if (ONLY && !ONLY.has(slug)) continue
    const before = cpuSnapshot()
    const result = await burst({
      gatewayUrl: platform.gatewayUrl,
      slug,
      input,
      keys,
      seconds: SECONDS,
      concurrency: CONCURRENCY,
    })
    const after = cpuSnapshot()
    rows.push(burstRow(slug, result, catalog.get(slug)?.runner.concurrency ?? '?'))
    console.log(rows.at(-1))
    profiles.push('', ...cpuSharesTable(slug, cpuShares(before, after, result.totals.length)))
  }

  // The anchor: the same split in this process, one core, no storage and no network.
  if (!ONLY || ONLY.has('split-pdf')) {
    const n = 120
    const t0 = performance.now()
    for (let i = 0; i < n; i++) {
      const src = await PDFDocument.load(tenPages)
      for (const index of src.getPageIndices()) {
        const out = await PDFDocument.create()
        const [page] = await out.copyPages(src, [index])
        out.addPage(page)
        await out.save()
      }
    }
    const wall = (performance.now() - t0) / 1000
    rows.push(
      `| split-pdf with pdf-lib in this process (anchor) | ${n} | ${wall.toFixed(1)} s | ${(n / wall).toFixed(0)} | — | — | — |`,
    )
    console.log(rows.at(-1))
  }
} finally {
  await files.stop()
  await platform.stop()
}
console.log(
  `\nmake bench-throughput: ${CONCURRENCY} clients, ${KEYS} keys, ${SECONDS} s per utility (dev node agent tier)\n`,
)
for (const line of [...BURST_TABLE_HEADER, ...rows, ...profiles]) console.log(line)
