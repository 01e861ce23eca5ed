import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CoordinationV1Api } from '@kubernetes/client-node'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { newId } from '../../contract/ids.js'
import { ulid } from 'ulid'
import { storageClient } from '../../platform/storage-client.js'
import { isoMs, utcDay } from '../../contract/time.js'
import { openDatabase, type Database } from '../../platform/db/database.js'
import { insertAccepted } from '../../platform/db/jobs-table.js'
import { partitionDays } from '../../platform/db/partitions.js'
import { tcpOpen, until } from '../platform/wait-for.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { api } from './helpers/api.js'
import { createKey, kubeConfig } from './helpers/keys.js'
import {
  killComponent,
  metricValue,
  scrape,
  startComponent,
  startComponentAs,
  startOperator,
  terminateComponent,
  waitForLeader,
  waitForOperatorReady,
} from './helpers/processes.js'

let files: FileServer
let key: string
let keyId: string
let db: Database
beforeAll(async () => {
  db = openDatabase({ url: inject('databaseUrl'), applicationName: 'dutil-test' })
  files = await new FileServer().start()
  files.add('four.pdf', await makePdf(4))
  ;({ key, id: keyId } = await createKey())
})
afterAll(async () => {
  await files.stop()
  await db.end()
})

const env = () => inject('programEnv')
const operatorPort = () => Number(env().DUTIL_OPERATOR_PORT)
const gatewayPort = () => Number(env().DUTIL_PORT)
const logOf = (name: string) => readFileSync(join(inject('platformDir'), 'logs', `${name}.log`), 'utf8')
const lease = () =>
  kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'dutil-operator', namespace: 'dutil' })
const s3 = () => storageClient(inject('storage'))

async function objectKeys(prefix: string): Promise<string[]> {
  const keys: string[] = []
  for await (const item of s3().listObjectsV2(inject('storage').bucket, prefix, true))
    if (item.name) keys.push(item.name)
  return keys
}

describe('operator leader election', () => {
  it('given two replicas, one leads and one stands by ready; on SIGTERM the leader hands the lease over and the standby runs jobs', async () => {
    const standbyPort = gatewayPort() + 2
    startComponentAs('operator-b', 'operator', {
      DUTIL_POD_NAME: 'operator-b',
      DUTIL_OPERATOR_PORT: String(standbyPort),
    })
    try {
      await waitForOperatorReady(60_000, standbyPort)
      const leaderName = (await lease()).spec?.holderIdentity
      expect(leaderName).toBeTruthy()
      expect(leaderName).not.toBe('operator-b')
      expect(metricValue(await scrape(operatorPort()), 'dutil_operator_leader')).toBe(1)
      expect(metricValue(await scrape(standbyPort), 'dutil_operator_leader')).toBe(0)
      const transitions = (await lease()).spec?.leaseTransitions ?? 0

      const handedOver = Date.now()
      await terminateComponent('operator')
      await waitForLeader(standbyPort, 10_000)
      // Released, not expired: the standby took over within a few retry periods, not a 15 s lease.
      expect(Date.now() - handedOver).toBeLessThan(10_000)
      expect((await lease()).spec).toMatchObject({ holderIdentity: 'operator-b', leaseTransitions: transitions + 1 })
      expect(logOf('operator')).toContain('released the lease')

      const url = `${files.url}/files/four.pdf`
      const res = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url } } })
      expect(res.status).toBe(200)
      expect(res.body.result.pageCount).toBe(4)
      expect(logOf('operator-b')).toContain(res.body.id)
    } finally {
      await terminateComponent('operator-b')
      startOperator()
      await waitForLeader()
    }
  })
})

describe('gateway graceful shutdown', () => {
  it('given a sync run in flight, SIGTERM answers it 202 + Location, refuses new connections, and the job finishes', async () => {
    const { key } = await createKey()
    const url = `${files.url}/slow/four.pdf?ms=3000`
    const pending = api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url } } })
    // The job exists (a sync job runs from accept) and its runner waits on the slow input.
    await expect
      .poll(async () => (await api('GET', '/v1/jobs', { key })).body.items?.[0]?.status, {
        timeout: 10_000,
        interval: 100,
      })
      .toBe('running')
    const stopped = terminateComponent('gateway')
    const res = await pending
    expect(res.status).toBe(202)
    expect(res.headers.get('location')).toBe(`/v1/jobs/${res.body.id}`)
    expect(res.headers.get('retry-after')).toBe('5')
    expect(['queued', 'running']).toContain(res.body.status)
    await stopped
    expect(await tcpOpen(gatewayPort())).toBe(false)
    expect(logOf('gateway')).toContain('gateway stopped')

    startComponent('gateway')
    await until(
      'gateway ready',
      async () => (await fetch(`http://127.0.0.1:${gatewayPort()}/readyz`).catch(() => null))?.status === 200,
      30_000,
      100,
    )
    const done = await api('GET', `${res.headers.get('location')}?wait=30`, { key })
    expect(done.body.status).toBe('succeeded')
  })
})

describe('observability', () => {
  it('counts requests by route and status, and logs each API request with its request id and job id', async () => {
    const url = `${files.url}/files/four.pdf`
    const res = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key,
      body: { input: { url } },
      headers: { 'X-Request-Id': 'req-lifecycle-1' },
    })
    expect(res.status).toBe(202)
    await api('GET', '/v1/jobs', { key: 'du_live_' + '0'.repeat(48) })
    const metrics = await scrape(gatewayPort())
    expect(
      metricValue(
        metrics,
        'dutil_http_request_duration_seconds_count{method="POST",route="/v1/utilities/:slug/jobs",status="202"}',
      ),
    ).toBeGreaterThanOrEqual(1)
    expect(
      metricValue(metrics, 'dutil_http_request_duration_seconds_count{method="GET",route="/v1/jobs",status="401"}'),
    ).toBeGreaterThanOrEqual(1)
    expect(metricValue(metrics, 'dutil_jobs_created_total{utility="split-pdf",mode="async"}')).toBeGreaterThanOrEqual(1)
    await until('access log line', async () => logOf('gateway').includes('req-lifecycle-1'), 5_000, 100)
    const line = JSON.parse(
      logOf('gateway')
        .split('\n')
        .find((l) => l.includes('req-lifecycle-1') && l.includes('"msg":"request"'))!,
    )
    expect(line).toMatchObject({
      requestId: 'req-lifecycle-1',
      jobId: res.body.id,
      method: 'POST',
      route: '/v1/utilities/:slug/jobs',
      status: 202,
    })

    await api('GET', `/v1/jobs/${res.body.id}?wait=30`, { key })
    const op = await scrape(operatorPort())
    expect(
      metricValue(op, 'dutil_jobs_finished_total{utility="split-pdf",status="succeeded",error_code=""}'),
    ).toBeGreaterThanOrEqual(1)
    expect(metricValue(op, 'dutil_job_queue_seconds_count{utility="split-pdf"}')).toBeGreaterThanOrEqual(1)
    expect(metricValue(op, 'dutil_runner_duration_seconds_count{utility="split-pdf"}')).toBeGreaterThanOrEqual(1)
    for (const series of [
      'dutil_operator_queue_depth',
      'dutil_callback_queue_depth',
      'dutil_operator_reconcile_errors_total',
      'dutil_operator_leader',
    ]) {
      expect(metricValue(op, series)).toBeDefined()
    }
    const opLines = logOf('operator')
      .split('\n')
      .filter((l) => l.includes(res.body.id))
    expect(opLines.length).toBeGreaterThan(0)
    for (const l of opLines) expect(JSON.parse(l).jobId).toBe(res.body.id)
  })

  it('reports ready only while storage is reachable', async () => {
    expect((await fetch(`http://127.0.0.1:${operatorPort()}/readyz`)).status).toBe(200)
    killComponent('minio')
    try {
      await until(
        'operator not ready',
        async () => (await fetch(`http://127.0.0.1:${operatorPort()}/readyz`)).status === 503,
        10_000,
        200,
      )
      await until(
        'gateway not ready',
        async () => (await fetch(`http://127.0.0.1:${gatewayPort()}/readyz`)).status === 503,
        10_000,
        200,
      )
      expect(await (await fetch(`http://127.0.0.1:${operatorPort()}/readyz`)).text()).toBe('storage unreachable')
    } finally {
      startComponent('minio')
      await until('minio up', () => tcpOpen(Number(new URL(inject('storage').endpoint).port)))
    }
    await until(
      'ready again',
      async () => (await fetch(`http://127.0.0.1:${operatorPort()}/readyz`)).status === 200,
      30_000,
      200,
    )
  })
})

describe('retention', () => {
  it('deletes whole days of the job record past the retention with their files, the gateway answers 404; recent jobs and orphans as before', async () => {
    const url = `${files.url}/files/four.pdf`
    const res = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url } } })
    expect(res.status).toBe(200)
    const id: string = res.body.id
    const outputs = `split-pdf/${res.body.createdAt.slice(0, 10)}/${id}/`
    expect(await objectKeys(outputs)).toHaveLength(4)
    // The job's bookkeeping: its runner's result manifest (its input rode with the job, sealed; a
    // progress report, if the run lasted long enough to write one, is gone once the result carries its count).
    expect(await objectKeys(`_jobs/${id}/`)).toEqual([`_jobs/${id}/result.json`])

    // A job of this key from three days ago, in the record with its files.
    const { bucket } = inject('storage')
    const oldAt = Date.now() - 3 * 86_400_000
    const oldId = `job_${ulid(oldAt)}` // not newId: its monotonic factory never goes back in time
    const oldOutput = `split-pdf/${utcDay(oldAt)}/${oldId}/page-1.pdf`
    await insertAccepted(db, {
      spec: {
        jobId: oldId,
        utility: 'split-pdf',
        mode: 'async',
        apiKeyId: keyId,
        apiKeyName: 'old',
        createdAt: isoMs(oldAt),
        inputKey: `_jobs/${oldId}/input.json`,
        metadata: null,
      },
      status: {
        state: 'succeeded',
        startedAt: isoMs(oldAt),
        finishedAt: isoMs(oldAt + 1000),
        timings: { queueMs: 0, upstreamMs: 1, storageMs: 1, totalMs: 1000 },
        result: {
          files: [{ key: oldOutput, name: 'page-1.pdf', size: 4, contentType: 'application/pdf' }],
          extras: { pageCount: 1 },
        },
        error: null,
      },
    })
    await s3().putObject(bucket, `_jobs/${oldId}/input.json`, Buffer.from('{}'))
    await s3().putObject(bucket, oldOutput, Buffer.from('%PDF'))
    expect((await api('GET', `/v1/jobs/${oldId}`, { key })).status).toBe(200)

    // Orphans: an input whose job was never created, and outputs of a job deleted by hand, both from three days ago.
    const orphanId = `job_${ulid(oldAt)}`
    await s3().putObject(bucket, `_jobs/${orphanId}/input.json`, Buffer.from('{}'))
    await s3().putObject(bucket, `split-pdf/${utcDay(oldAt)}/${orphanId}/page-1.pdf`, Buffer.from('%PDF'))
    // A recent orphan stays: its request may still be creating its job.
    const recentId = newId('job')
    await s3().putObject(bucket, `_jobs/${recentId}/input.json`, Buffer.from('{}'))

    // The operator with a retention of one day, swept every second.
    killComponent('operator')
    startOperator({ DUTIL_RETENTION_DAYS: '1', DUTIL_RETENTION_SWEEP_SECONDS: '1' })
    try {
      await waitForLeader()
      await expect
        .poll(async () => (await api('GET', `/v1/jobs/${oldId}`, { key })).status, { timeout: 30_000, interval: 250 })
        .toBe(404)
      expect(await objectKeys(`_jobs/${oldId}/`)).toEqual([])
      expect(await objectKeys(`split-pdf/${utcDay(oldAt)}/${oldId}/`)).toEqual([])
      expect(await partitionDays(db)).not.toContain(utcDay(oldAt))
      // Today's job is within the retention: kept, with its files.
      expect((await api('GET', `/v1/jobs/${id}`, { key })).status).toBe(200)
      expect(await objectKeys(outputs)).toHaveLength(4)
      await expect.poll(async () => (await objectKeys(`_jobs/${orphanId}/`)).length, { timeout: 10_000 }).toBe(0)
      await expect
        .poll(async () => (await objectKeys(`split-pdf/${utcDay(oldAt)}/${orphanId}/`)).length, { timeout: 10_000 })
        .toBe(0)
      expect(await objectKeys(`_jobs/${recentId}/`)).toHaveLength(1)
      expect(metricValue(await scrape(operatorPort()), 'dutil_retention_deleted_jobs_total')).toBeGreaterThanOrEqual(1)
    } finally {
      killComponent('operator')
      startOperator()
      await waitForLeader()
      await s3().removeObject(bucket, `_jobs/${recentId}/input.json`)
    }
  })
})
