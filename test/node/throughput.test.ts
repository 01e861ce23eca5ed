import { readFileSync, writeFileSync } from 'node:fs'
import { get } from 'node:https'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { createKey } from '../integration/helpers/keys.js'
import { REPO_ROOT } from '../platform/platform.js'
import { makePdf } from '../support/pdfs.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'
import { burst, burstRow, BURST_TABLE_HEADER, percentile } from '../bench/burst.js'
import { cpuShares, cpuSharesTable, cpuSnapshot } from '../bench/cpu-shares.js'
import {
  clientCounters,
  clientRow,
  CLIENT_TABLE_HEADER,
  requestRows,
  servedRequests,
  type ClientCounters,
} from '../bench/client-metrics.js'
import { catalog } from '../../runners/catalog.js'
import { LABELS } from '../../contract/api-group.js'
import { objectNameOf } from '../../contract/ids.js'
import { BROWSER_SANDBOX_VALUES, NS, RELEASE } from './chart-values.js'
import { kubectl, poolOff, poolOn, putFile, upgradeRelease } from './helpers.js'

/**
 * `make bench-throughput-node`: `make bench-throughput`'s bursts on the real node (kubelet +
 * containerd + runc, the chart's first release): for each utility, BENCH_CONCURRENCY clients
 * (default 16) follow small async jobs to their end for BENCH_SECONDS (default 60), over
 * BENCH_KEYS keys (default 8; a list such as 1,4,16 runs one burst per number of keys, the
 * tenants taking turns). Beside each row: where the node's CPU went per completed job
 * (host programs, the release's pods, the runner pods), and the runner pods that failed and were
 * retried. Printed and written to .test-results.node-throughput.md, never asserted beyond every
 * job succeeding: timing is for benchmarks. Runs only when DUTIL_NODE_THROUGHPUT is set (the
 * Makefile target sets it). split-pdf and html-pdf by default; BENCH_ONLY=zip-files,unzip-files names
 * the utilities (any of them); BENCH_SLOTS=
 * html-pdf=6,split-pdf=3 first upgrades the release with those run slots
 * (`runners.<slug>.concurrency`); BENCH_POOL=html-pdf=4,split-pdf=6 with those utilities in pool
 * mode and pools of that size (docs/adr/0026), one utility's pool at a time; BENCH_BROWSER_SANDBOX=1
 * runs html-pdf's Chromium with its own sandbox (docs/adr/0031). Before each burst one client runs jobs one after another for
 * BENCH_ALONE_SECONDS (default 15): a small job's latency on an otherwise idle release.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
/** BENCH_KEYS=1,4,16: one burst per number of keys (tenants), in that order. */
const KEY_COUNTS = (process.env.BENCH_KEYS ?? '8').split(',').map(Number)
const KEYS = Math.max(...KEY_COUNTS)
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null
const ALONE_SECONDS = Number(process.env.BENCH_ALONE_SECONDS ?? 15)
/** BENCH_POOL=html-pdf=4,split-pdf=6: the utilities in pool mode, and their pool sizes. */
const POOLS = new Map(
  (process.env.BENCH_POOL ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => pair.split('=') as [string, string]),
)

interface PodList {
  items: Array<{
    metadata: { uid: string; name: string; namespace: string; labels?: Record<string, string> }
    status?: {
      containerStatuses?: Array<{ state?: { terminated?: { reason?: string; exitCode?: number } } }>
    }
  }>
}

/** Pod UID → a name for every pod that is not a runner's (the release's programs, cluster DNS). */
function programPods(): Map<string, string> {
  const pods = JSON.parse(kubectl(['get', 'pods', '-A', '-l', `!${LABELS.jobId}`, '-o', 'json'])) as PodList
  return new Map(
    pods.items.map((p) => [
      p.metadata.uid,
      p.metadata.labels?.['app.kubernetes.io/component'] ?? p.metadata.name.replace(/(-[a-z0-9]{5,10}){1,2}$/, ''),
    ]),
  )
}

/**
 * /metrics of kube-controller-manager or kube-scheduler on loopback, as the platform's admin;
 * their serving certificate files hold the CA that signed them.
 */
function componentMetrics(port: number, certFile: string): Promise<string> {
  const pki = join(inject('platformDir'), 'pki')
  return new Promise((resolve, reject) => {
    get(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        ca: readFileSync(join(pki, certFile)),
        cert: readFileSync(join(pki, 'admin.crt')),
        key: readFileSync(join(pki, 'admin.key')),
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`/metrics: ${res.statusCode}`))))
      },
    ).on('error', reject)
  })
}

/** The API clients of the control plane and the kubelet: requests so far and rate-limiter waits. */
async function controlPlaneClients(): Promise<Record<string, ClientCounters>> {
  const ports = inject('controlPlanePorts')
  const node = kubectl(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])
  return {
    'kube-controller-manager': clientCounters(
      await componentMetrics(ports.controllerManager, 'kcm/kube-controller-manager.crt'),
    ),
    'kube-scheduler': clientCounters(await componentMetrics(ports.scheduler, 'scheduler/kube-scheduler.crt')),
    // The kubelet's /metrics through the API server's node proxy.
    kubelet: clientCounters(kubectl(['get', '--raw', `/api/v1/nodes/${node}/proxy/metrics`])),
  }
}

/** What the API server served so far, by flow schema and by verb and resource (its own /metrics). */
function apiServerRequests() {
  return servedRequests(kubectl(['get', '--raw', '/metrics']))
}

/** The Events of a job's UtilityJob, its batch Job and its pods, oldest first. */
function eventsOf(jobId: string): string {
  const name = objectNameOf(jobId)
  return kubectl([
    '-n',
    NS,
    'get',
    'events',
    '--sort-by=.lastTimestamp',
    '-o',
    'custom-columns=TIME:.eventTime,OBJECT:.involvedObject.name,REASON:.reason,MESSAGE:.message',
  ])
    .split('\n')
    .filter((line, i) => i === 0 || line.includes(name))
    .join('\n')
}

/** The lines of the operators' log about one job (its name or id), oldest first: where its time went. */
function linesAbout(log: string, jobId: string): string {
  const name = objectNameOf(jobId)
  return log
    .split('\n')
    .filter((line) => line.includes(name) || line.includes(jobId))
    .slice(0, 60)
    .join('\n')
}

/** Every log line of the operator replicas, each prefixed with its pod. */
function operatorLog(): string {
  return kubectl([
    '-n',
    NS,
    'logs',
    '-l',
    'app.kubernetes.io/component=operator',
    '--prefix',
    '--tail=-1',
    '--max-log-requests=4',
  ])
}

/** Runner pods of `slug` that ended in failure, counted by reason and exit code. */
function failedRunnerPods(slug: string): string {
  const pods = JSON.parse(
    kubectl([
      '-n',
      NS,
      'get',
      'pods',
      '-l',
      `${LABELS.utility}=${slug}`,
      '--field-selector=status.phase=Failed',
      '-o',
      'json',
    ]),
  ) as PodList
  const reasons = new Map<string, number>()
  for (const p of pods.items) {
    const t = p.status?.containerStatuses?.[0]?.state?.terminated
    const why = t ? `${t.reason ?? 'terminated'} (exit ${t.exitCode})` : 'no container status'
    reasons.set(why, (reasons.get(why) ?? 0) + 1)
  }
  return reasons.size ? [...reasons].map(([why, n]) => `${n} × ${why}`).join(', ') : 'none'
}

/** Pool mode: the utility's pool pods now, and how many serve a tenant (one each). */
function poolNow(slug: string): string {
  const pods = JSON.parse(kubectl(['-n', NS, 'get', 'pods', '-l', `${LABELS.pool}=${slug}`, '-o', 'json'])) as PodList
  const bound = pods.items.filter((p) => p.metadata.labels?.[LABELS.poolTenant]).length
  return `${pods.items.length} pods, ${bound} bound to a tenant`
}

describe.skipIf(inject('nodeBlocker') || !process.env.DUTIL_NODE_THROUGHPUT)(
  'throughput of small jobs on a real node',
  () => {
    // Every burst, its warm-up, the one-client run and each pool's upgrade and teardown.
    const timeout = (ONLY?.size ?? 2) * (KEY_COUNTS.length * (SECONDS + 60) + ALONE_SECONDS + 240) * 1000
    it(
      `sustains bursts of ${CONCURRENCY} clients for ${SECONDS} s per utility and reports completed jobs per second`,
      { timeout },
      async () => {
        if (process.env.BENCH_SLOTS)
          await upgradeRelease(
            ...process.env.BENCH_SLOTS.split(',').map((pair) => {
              const [slug, n] = pair.split('=')
              return `runners.${slug}.concurrency=${Number(n)}`
            }),
          )
        // Chromium's own sandbox for html-pdf, with the chart's profile the real node has (its cost).
        if (process.env.BENCH_BROWSER_SANDBOX) await upgradeRelease(...BROWSER_SANDBOX_VALUES)
        const keys: string[] = []
        for (let i = 0; i < KEYS; i++) keys.push((await createKey({ rateLimitPerMinute: 100_000 })).key)
        const pdf = await putFile('throughput-ten.pdf', await makePdf(10))
        const page = await putFile('throughput.html', '<h1>Invoice 1</h1><p>One small page.</p>')
        // split-pdf and html-pdf by default; BENCH_ONLY names any of them.
        const inputs: Record<string, unknown> = {
          'office-pdf': {
            url: await putFile(
              'throughput.docx',
              readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'documents', 'text.docx')),
            ),
          },
          'split-pdf': { url: pdf },
          'html-pdf': { url: page },
          // The same page's picture (the viewport, 800 × 600, png).
          'html-image': { url: page },
          'merge-pdf': { files: [{ url: pdf }, { url: pdf }] },
          // The ten pages stamped and compressed, as a PDF tool run on a document.
          'edit-pdf': { url: pdf, stamp: { text: 'PAID' }, compress: true },
          // The ten pages' facts: the cheapest job there is, a download and qpdf's description.
          'pdf-info': { url: pdf },
          'zip-files': {
            files: [
              { url: pdf, fileName: 'ten.pdf' },
              { url: page, fileName: 'page.html' },
            ],
          },
          'unzip-files': {
            url: await putFile(
              'throughput.zip',
              writeZip([fileEntry('a.txt', Buffer.from('a')), fileEntry('b/c.txt', Buffer.from('c'))]),
            ),
          },
          'xls-to-xlsx': {
            url: await putFile(
              'throughput.xls',
              readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'workbooks', 'libreoffice.xls')),
            ),
          },
        }
        const DEFAULT = new Set(['split-pdf', 'html-pdf'])
        // The run slots of each utility, as the chart gave them to the operator.
        const slots = JSON.parse(
          kubectl([
            '-n',
            NS,
            'get',
            'deployment',
            `${RELEASE}-operator`,
            '-o',
            'jsonpath={.spec.template.spec.containers[0].env[?(@.name=="DUTIL_UTILITY_CONCURRENCY")].value}',
          ]) || '{}',
        ) as Record<string, number>
        for (const [slug, size] of POOLS) slots[slug] = Number(size)
        const rows: string[] = []
        const alone: string[] = []
        const profiles: string[] = []
        for (const [slug, input] of Object.entries(inputs)) {
          if (ONLY ? !ONLY.has(slug) : !DEFAULT.has(slug)) continue
          if (POOLS.has(slug)) await poolOn(slug, Number(POOLS.get(slug)))
          const aloneBefore = cpuSnapshot(programPods())
          const one = await burst({
            gatewayUrl: inject('gatewayUrl'),
            slug,
            input,
            keys: keys.slice(0, 1),
            seconds: ALONE_SECONDS,
            concurrency: 1,
          })
          expect(one.failed, `${slug}, one client`).toBe(0)
          profiles.push(
            ...cpuSharesTable(
              `${slug}, one client`,
              cpuShares(aloneBefore, cpuSnapshot(programPods()), one.totals.length),
            ),
            '',
          )
          alone.push(
            `| ${slug}${POOLS.has(slug) ? ' (pool mode)' : ''} | ${one.totals.length} | ${percentile(one.totals, 50)} ms | ${percentile(one.totals, 90)} ms | ${Math.max(...one.totals)} ms |`,
          )
          process.stdout.write(`[real-node] one client: ${alone.at(-1)}\n`)
          for (const keyCount of KEY_COUNTS) {
            const label = `${slug}${POOLS.has(slug) ? ' (pool mode)' : ''}${KEY_COUNTS.length > 1 ? `, ${keyCount} keys` : ''}`
            const names = programPods()
            const clientsBefore = await controlPlaneClients()
            const servedBefore = apiServerRequests()
            const before = cpuSnapshot(names)
            const result = await burst({
              gatewayUrl: inject('gatewayUrl'),
              slug,
              input,
              keys: keys.slice(0, keyCount),
              seconds: SECONDS,
              concurrency: CONCURRENCY,
            })
            const after = cpuSnapshot(names)
            const clientsAfter = await controlPlaneClients()
            const servedAfter = apiServerRequests()
            const operators = operatorLog()
            rows.push(burstRow(label, result, slots[slug] ?? catalog.get(slug)?.runner.concurrency ?? '?'))
            process.stdout.write(`[real-node] ${rows.at(-1)}\n`)
            profiles.push(
              ...cpuSharesTable(label, cpuShares(before, after, result.totals.length)),
              '',
              ...CLIENT_TABLE_HEADER,
              ...Object.keys(clientsAfter).map((c) =>
                clientRow(c, clientsBefore[c], clientsAfter[c], result.totals.length),
              ),
              '',
              `${label}: requests the API server served per completed job, by flow schema (who: the chart's schemas are dutil's operator and its gateway with the key commands; exempt is system:masters: here the controller manager, the scheduler and the bench's kubectl)`,
              '',
              '| flow schema | requests per job |',
              '|---|---|',
              ...requestRows(servedBefore.byFlowSchema, servedAfter.byFlowSchema, result.totals.length),
              '',
              '| verb and resource | requests per job |',
              '|---|---|',
              ...requestRows(servedBefore.byVerb, servedAfter.byVerb, result.totals.length),
              '',
              POOLS.has(slug)
                ? `${label}: the pool after the burst: ${poolNow(slug)}`
                : `${slug}: runner pods that failed (each retried by its Job): ${failedRunnerPods(slug)}`,
              '',
              `${label}: the slowest job, ${result.slowest?.id}: ${JSON.stringify(result.slowest?.timings)}`,
              '',
              ...result.failures.flatMap((f) => [
                `${label}: failed, ${f.id}: ${JSON.stringify(f.error)} ${JSON.stringify(f.timings)}`,
                '',
                '```',
                eventsOf(f.id),
                '```',
                '',
              ]),
              '',
              '```',
              result.slowest ? eventsOf(result.slowest.id) : '',
              '```',
              '',
              `${label}: the operators' log lines about the slowest job:`,
              '',
              '```',
              result.slowest ? linesAbout(operators, result.slowest.id) : '',
              '```',
              '',
            )
            // Written after every burst, so that a failed burst keeps the rows before it.
            writeReport()
            // Every operator log line of the burst, for a closer look (.test-results.node-operator-<label>.log).
            writeFileSync(
              join(REPO_ROOT, `.test-results.node-operator-${label.replace(/[^\w-]+/g, '_')}.log`),
              operators,
            )
            expect(result.failed, label).toBe(0)
            expect(result.totals.length, label).toBeGreaterThan(0)
            expect(percentile(result.totals, 50), label).toBeGreaterThan(0)
          }
          if (POOLS.has(slug)) await poolOff(slug)
        }
        function writeReport() {
          const report = [
            `make bench-throughput-node: ${CONCURRENCY} clients, ${KEY_COUNTS.join(' / ')} keys, ${SECONDS} s per burst (real node)`,
            '',
            ...BURST_TABLE_HEADER,
            ...rows,
            '',
            `One client, one job after another for ${ALONE_SECONDS} s (accept → succeeded):`,
            '',
            '| work | jobs | p50 | p90 | max |',
            '|---|---|---|---|---|',
            ...alone,
            '',
            ...profiles,
          ].join('\n')
          writeFileSync(join(REPO_ROOT, '.test-results.node-throughput.md'), report)
        }
      },
    )
  },
)
