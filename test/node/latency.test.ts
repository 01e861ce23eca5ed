import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { resultObjectKey, type RunnerResult } from '../../contract/runner-protocol.js'
import { storageClient } from '../../platform/storage-client.js'
import { createKey } from '../integration/helpers/keys.js'
import { REPO_ROOT } from '../platform/platform.js'
import { objectNameOf } from '../../contract/ids.js'
import { containerdTimes, operatorField, operatorTimes, stageDurations, type JobMarks } from '../bench/job-timeline.js'
import { NS } from './chart-values.js'
import { makePdf } from '../support/pdfs.js'
import { kubectl, putFile } from './helpers.js'

/**
 * What a small job costs on a real node (docs/benchmarks.md; compare `make bench-latency` on the
 * node agent): a 10-page split-pdf, one job at a time. Accept → runner start is the job's
 * createdAt to the runner program's own start (its result manifest, in ms, after container
 * creation and Node start-up); accept → succeeded is the job's totalMs. Then where that time
 * went, stage by stage (test/bench/job-timeline.ts: the operator's log, containerd's log, the
 * runner's manifest). Printed and written to .test-results.node-latency.md, never asserted:
 * timing is for benchmarks (`make bench-node` runs more samples).
 */
const RESULT_READ = 'result manifest stored: finishing before the runner exit is reported'
const RUNS = Number(process.env.DUTIL_NODE_LATENCY_RUNS ?? 5)
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]

describe.skipIf(inject('nodeBlocker'))('latency of a small job on a real node', () => {
  it(`runs ${RUNS} ten-page splits one after another (after one warm-up) and reports accept → runner start and accept → succeeded`, async () => {
    const { key } = await createKey({ rateLimitPerMinute: 100_000 })
    const url = await putFile('ten.pdf', await makePdf(10))
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }
    const s3 = storageClient(inject('storage'))
    const toStart: number[] = []
    const toDone: number[] = []
    const runs: Array<{ id: string; accepted: number; totalMs: number; manifest: RunnerResult }> = []
    for (let i = 0; i <= RUNS; i++) {
      const created = (await (
        await fetch(`${inject('gatewayUrl')}/v1/utilities/split-pdf/jobs`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ input: { url } }),
        })
      ).json()) as { id: string }
      const done = (await (
        await fetch(`${inject('gatewayUrl')}/v1/jobs/${created.id}?wait=60`, { headers })
      ).json()) as {
        status: string
        createdAt: string
        timings: { totalMs: number }
        result: { pageCount: number }
      }
      expect(done.status).toBe('succeeded')
      expect(done.result.pageCount).toBe(10)
      if (i === 0) continue
      const manifest = JSON.parse(
        await streamText(await s3.getObject(inject('storage').bucket, resultObjectKey(created.id))),
      ) as RunnerResult
      toStart.push(Date.parse(manifest.startedAt) - Date.parse(done.createdAt))
      toDone.push(done.timings.totalMs)
      runs.push({ id: created.id, accepted: Date.parse(done.createdAt), totalMs: done.timings.totalMs, manifest })
    }
    const pods = containerdTimes(readFileSync(join(inject('platformDir'), 'logs', 'containerd.log'), 'utf8'))
    const operatorLog = kubectl(['-n', NS, 'logs', '-l', 'app.kubernetes.io/component=operator', '--tail=-1'])
    const logged = operatorTimes(operatorLog, ['job created', RESULT_READ])
    const marks: JobMarks[] = runs.map((r) => {
      const pod = [...pods].find(([name]) => name.startsWith(`${objectNameOf(r.id)}-`))?.[1] ?? {}
      const ops = logged.get(r.id) ?? {}
      const runnerStarted = Date.parse(r.manifest.startedAt)
      return {
        accepted: r.accepted,
        batchJobCreated: ops['job created'],
        ...pod,
        runnerStarted,
        runnerDone: runnerStarted + r.manifest.upstreamMs + r.manifest.storageMs,
        resultRead: ops[RESULT_READ],
        succeeded: r.accepted + r.totalMs,
      }
    })
    const stages = stageDurations(marks)
    // Inside the first stage: the runner's storage credentials, issued by storage for each job.
    const credentials = operatorField(operatorLog, 'job created', 'credentialsMs')
    stages.splice(1, 0, [
      '  of which the runner’s storage credentials (STS)',
      runs.flatMap((r) => (credentials.has(r.id) ? [credentials.get(r.id)!] : [])),
    ])
    const row = (name: string, xs: number[]) =>
      `| ${name} | ${pct(xs, 50)} | ${pct(xs, 99)} | ${Math.min(...xs)} | ${Math.max(...xs)} |`
    const report = [
      `Real node (kubelet + containerd + runc), split-pdf of 10 pages, ${RUNS} runs one at a time after one warm-up:`,
      '',
      '| ms | p50 | p99 | min | max |',
      '|---|---|---|---|---|',
      row('accept → runner start', toStart),
      row('accept → succeeded', toDone),
      '',
      'Where it went, stage by stage (each stage over the runs where both its ends were logged):',
      '',
      '| stage, ms | p50 | min | max | runs |',
      '|---|---|---|---|---|',
      ...stages.map(([name, ms]) =>
        ms.length
          ? `| ${name} | ${pct(ms, 50)} | ${Math.min(...ms)} | ${Math.max(...ms)} | ${ms.length} |`
          : `| ${name} | — | — | — | 0 |`,
      ),
      '',
    ].join('\n')
    process.stdout.write(`[real-node] ${report.replace(/\n/g, '\n[real-node] ')}\n`)
    writeFileSync(join(REPO_ROOT, '.test-results.node-latency.md'), report)
    toStart.forEach((ms, i) => {
      // The runner started after the job was accepted and before it finished.
      expect(ms, `run ${i + 1}`).toBeGreaterThan(0)
      expect(ms, `run ${i + 1}`).toBeLessThan(toDone[i])
    })
  })
})

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer))
  return Buffer.concat(chunks).toString('utf8')
}
