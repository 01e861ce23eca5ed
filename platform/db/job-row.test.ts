import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { newId } from '../../contract/ids.js'
import { toJobView, traceparentOfJob } from '../../contract/job-view.js'
import { createdAtOfJobId, recordOf, rowOf } from './job-row.js'
import { dayOfPartition, partitionName } from './partitions.js'

const link = (key: string) => ({ url: `https://files.example/${key}`, expiresAt: '2026-01-01T00:00:00.000Z' })

function job(
  over: Partial<UtilityJobResource['status']> = {},
  spec: Partial<UtilityJobResource['spec']> = {},
): UtilityJobResource {
  const at = Date.parse('2026-11-23T10:00:00.123Z')
  const jobId = newId('job', at)
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: 'x', resourceVersion: '7', finalizers: ['dutil.io/job-record'] },
    spec: {
      jobId,
      utility: 'split-pdf',
      mode: 'async',
      apiKeyId: 'key_A',
      apiKeyName: 'laptop',
      createdAt: new Date(at).toISOString(),
      inputKey: `_jobs/${jobId}/input.json`,
      metadata: { ref: 1 },
      callbackUrl: 'https://hooks.example/x',
      idempotencyKeyHash: 'ab'.repeat(20),
      ...spec,
    },
    status: {
      state: 'succeeded',
      startedAt: '2026-11-23T10:00:01.000Z',
      finishedAt: '2026-11-23T10:00:02.500Z',
      timings: { queueMs: 877, upstreamMs: 1000, storageMs: 300, totalMs: 2377 },
      result: {
        files: [
          {
            key: `split-pdf/2026-11-23/${jobId}/page-001.pdf`,
            name: 'page-001.pdf',
            size: 10,
            contentType: 'application/pdf',
            pageNumber: 1,
          },
        ],
        extras: { pageCount: 1 },
      },
      error: null,
      callback: {
        status: 'delivered',
        attempts: 1,
        nextAttemptAt: null,
        lastAttemptAt: '2026-11-23T10:00:03.000Z',
        lastStatusCode: 204,
        lastError: null,
        finishedAt: '2026-11-23T10:00:03.100Z',
      },
      jobName: 'x',
      ...over,
    },
  }
}

describe('job rows', () => {
  it('round-trip a UtilityJob: the view from the row equals the view from the object', () => {
    for (const j of [
      job(),
      job({ state: 'failed', result: null, error: { code: 'upstream_rejected', message: 'not a PDF' } }),
      job({
        state: 'queued',
        startedAt: null,
        finishedAt: null,
        timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: null },
        result: null,
        callback: undefined,
      }),
      job(
        {},
        {
          source: 'playground',
          userEmail: 'a@example.com',
          apiKeyId: '',
          apiKeyName: '',
          callbackUrl: undefined,
          idempotencyKeyHash: undefined,
        },
      ),
      job({
        state: 'running',
        finishedAt: null,
        result: null,
        progress: {
          done: 120,
          total: 500,
          unit: 'pages',
          updatedAt: '2026-11-23T10:00:01.500Z',
          summary: '120/500 pages',
        },
      }),
    ]) {
      const back = recordOf(rowOf(j))
      expect(toJobView(back, link)).toEqual(toJobView(j, link))
      expect(back.status?.progress).toEqual(j.status?.progress)
      expect(back.spec).toEqual(j.spec)
    }
  })

  it('keep the trace context of a traced job, and none for one that was not', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    const traced = { ...job(), metadata: { annotations: { 'dutil.io/traceparent': traceparent, other: 'x' } } }
    expect(rowOf(traced).traceparent).toBe(traceparent)
    expect(traceparentOfJob(recordOf(rowOf(traced)))).toBe(traceparent)
    expect(rowOf(job()).traceparent).toBeNull()
    expect(recordOf(rowOf(job())).metadata).toBeUndefined()
  })

  it('take a job without a status as queued, sync or async (a sync job waits for a run slot too)', () => {
    const { status: _s, ...noStatus } = job()
    expect(rowOf(noStatus).state).toBe('queued')
    expect(rowOf({ ...noStatus, spec: { ...noStatus.spec, mode: 'sync' } })).toMatchObject({
      state: 'queued',
      queue_ms: null,
      started_at: null,
    })
  })

  it('read timestamps back in the API form whatever text PostgreSQL gives', () => {
    const row = { ...rowOf(job()), created_at: '2026-11-23 10:00:00.123+00', finished_at: '2026-11-23 11:00:02.5+01' }
    expect(recordOf(row).spec.createdAt).toBe('2026-11-23T10:00:00.123Z')
    expect(recordOf(row).status!.finishedAt).toBe('2026-11-23T10:00:02.500Z')
  })

  it('know a job creation time from its id alone (the partition key)', () => {
    const j = job()
    expect(createdAtOfJobId(j.spec.jobId)).toBe(j.spec.createdAt)
    expect(createdAtOfJobId('key_01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeNull()
    expect(createdAtOfJobId('job_nope')).toBeNull()
    // Well-formed characters, but past the largest ULID (its time would overflow 48 bits).
    expect(createdAtOfJobId('job_ZZZZZZZZZZZZZZZZZZZZZZZZZZ')).toBeNull()
    expect(createdAtOfJobId('job_7ZZZZZZZZZZZZZZZZZZZZZZZZZ')).not.toBeNull()
  })
})

describe('partition names', () => {
  it('name one UTC day each and read back', () => {
    expect(partitionName('2026-11-23')).toBe('jobs_p20261123')
    expect(dayOfPartition('jobs_p20261123')).toBe('2026-11-23')
    expect(dayOfPartition('jobs')).toBeNull()
  })
})
