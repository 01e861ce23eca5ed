import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BatchV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { LABELS } from '../../contract/api-group.js'
import { objectNameOf } from '../../contract/ids.js'
import { until } from '../platform/wait-for.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { api } from './helpers/api.js'
import { createKey, kubeConfig } from './helpers/keys.js'
import { metricValue, restartOperator, scrape } from './helpers/processes.js'

/**
 * Admission (docs/adr/0013): per-utility concurrency limits and fair turns between tenants, on
 * the real platform. The operator runs with split-pdf limited to 2 for this file.
 */
const LIMIT = 2
let files: FileServer
let pdfUrl: string

/** A runner at work: its pod is not finished and its runner container has not exited. */
const working = (p: V1Pod) =>
  !['Succeeded', 'Failed'].includes(p.status?.phase ?? '') &&
  !(p.status?.containerStatuses ?? []).some((c) => c.name === 'runner' && c.state?.terminated)

/**
 * The order in which the operator admitted these jobs (its "jobs admitted" log lines, each in the
 * order decided). Jobs admitted in one pass have their batch Jobs created by concurrent workers,
 * so creation order may differ within a pass: the decision is what the policy governs.
 */
function admissionOrder(jobIds: string[]): string[] {
  const log = readFileSync(join(inject('platformDir'), 'logs', 'operator.log'), 'utf8')
  const byName = new Map(jobIds.map((id) => [objectNameOf(id), id]))
  const order: string[] = []
  for (const line of log.split('\n')) {
    if (!line.includes('"msg":"jobs admitted"')) continue
    for (const name of (JSON.parse(line) as { admitted: string[] }).admitted) {
      const id = byName.get(name)
      if (id && !order.includes(id)) order.push(id)
    }
  }
  return order
}

/** The order in which the operator created batch Jobs for these jobs (its log, oldest first). */
function creationOrder(jobIds: string[]): string[] {
  const log = readFileSync(join(inject('platformDir'), 'logs', 'operator.log'), 'utf8')
  const wanted = new Set(jobIds)
  const order: string[] = []
  for (const line of log.split('\n')) {
    if (!line.includes('"msg":"job created"')) continue
    const id = /"jobId":"(job_[0-9A-Z]+)"/.exec(line)?.[1]
    if (id && wanted.has(id) && !order.includes(id)) order.push(id)
  }
  return order
}

beforeAll(async () => {
  files = await new FileServer().start()
  pdfUrl = files.add('twenty.pdf', await makePdf(20))
  await restartOperator({ DUTIL_UTILITY_CONCURRENCY: JSON.stringify({ 'split-pdf': LIMIT }) })
})
afterAll(async () => {
  await restartOperator({})
  await files.stop()
})

describe('admission', () => {
  it('runs at most the limit at once; a job above it stays queued with no batch Job; a key with one job goes before a backlog; a cancelled queued job never gets a Job', async () => {
    const busy = await createKey({ name: 'backlog' })
    const quiet = await createKey({ name: 'single' })
    const submit = (key: string) =>
      api('POST', '/v1/utilities/split-pdf/jobs', { key, body: { input: { url: pdfUrl } } })
    const backlog: string[] = []
    for (let i = 0; i < 6; i++) backlog.push((await submit(busy.key)).body.id)
    const single = (await submit(quiet.key)).body.id
    const cancelled = (await submit(busy.key)).body.id
    expect((await api('POST', `/v1/jobs/${cancelled}/cancel`, { key: busy.key })).body.status).toBe('cancelled')
    const ours = new Set([...backlog, single, cancelled].map(objectNameOf))
    const batch = kubeConfig().makeApiClient(BatchV1Api)
    const core = kubeConfig().makeApiClient(CoreV1Api)
    let most = 0
    let sawQueuedWithoutJob = false
    await until(
      'every job finished',
      async () => {
        const jobs = (
          await batch.listNamespacedJob({ namespace: 'dutil', labelSelector: `${LABELS.utility}=split-pdf` })
        ).items.filter((j) => ours.has(j.metadata!.labels![LABELS.jobId]))
        const pods = (
          await core.listNamespacedPod({ namespace: 'dutil', labelSelector: `${LABELS.utility}=split-pdf` })
        ).items.filter((p) => ours.has(p.metadata!.labels![LABELS.jobId]))
        most = Math.max(most, pods.filter(working).length)
        const withJob = new Set(jobs.map((j) => j.metadata!.labels![LABELS.jobId]))
        const states = await Promise.all(
          [...backlog, single].map(async (id) => ({
            id,
            status: (await api('GET', `/v1/jobs/${id}`, { key: id === single ? quiet.key : busy.key })).body
              .status as string,
          })),
        )
        if (states.some((s) => s.status === 'queued' && !withJob.has(objectNameOf(s.id)))) sawQueuedWithoutJob = true
        return states.every((s) => s.status === 'succeeded')
      },
      120_000,
      100,
    )
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThanOrEqual(LIMIT)
    expect(sawQueuedWithoutJob).toBe(true)
    // The single job of the quiet key got the first slot that freed, before the backlog's third.
    const order = admissionOrder([...backlog, single])
    expect(order).toHaveLength(7)
    // (Within one slot turnover: at most the two first slots went to the backlog before it.)
    expect(order.indexOf(single)).toBeLessThanOrEqual(LIMIT)
    expect(order.filter((id) => id !== single)).toEqual(backlog)
    // The backlog's later jobs waited for real: their queueMs grows along the queue.
    const queueMs = await Promise.all(
      backlog.map(async (id) => (await api('GET', `/v1/jobs/${id}`, { key: busy.key })).body.timings.queueMs as number),
    )
    expect(queueMs[5]).toBeGreaterThan(queueMs[0])
    // Each admitted job got its batch Job; the cancelled one never had one, nor was it admitted.
    expect(new Set(creationOrder([...backlog, single]))).toEqual(new Set(order))
    expect(admissionOrder([cancelled])).toEqual([])
    expect(creationOrder([cancelled])).toEqual([])
    expect(
      (
        await batch.listNamespacedJob({
          namespace: 'dutil',
          labelSelector: `${LABELS.jobId}=${objectNameOf(cancelled)}`,
        })
      ).items,
    ).toEqual([])
    const metrics = await scrape(inject('programEnv').DUTIL_OPERATOR_PORT)
    expect(metricValue(metrics, 'dutil_jobs_queued{utility="split-pdf"}')).toBe(0)
    expect(metricValue(metrics, 'dutil_admission_wait_seconds_count{utility="split-pdf"}')).toBeGreaterThanOrEqual(7)
  }, 180_000)
})
