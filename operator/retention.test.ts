import { describe, expect, it } from 'vitest'
import type { UtilityJobResource, UtilityJobStatus } from '../contract/crd-schemas.js'
import { isoMs } from '../contract/time.js'
import { DAY_MS, expiredJobs, jobIdOfKey, storagePrefixesOf } from './retention.js'

const CREATED = Date.parse('2026-03-01T23:59:00.000Z')
const RETENTION = 90 * DAY_MS

function job(
  over: {
    state?: UtilityJobStatus['state']
    finishedAt?: number | null
    callbackUrl?: string
    callback?: 'pending' | 'delivered' | 'failed'
    mode?: 'sync' | 'async'
  } = {},
): UtilityJobResource {
  const state = over.state ?? 'succeeded'
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: 'job-01jq0000000000000000000000' },
    spec: {
      jobId: 'job_01JQ0000000000000000000000',
      utility: 'split-pdf',
      mode: over.mode ?? 'async',
      apiKeyId: 'key_x',
      apiKeyName: 'k',
      createdAt: isoMs(CREATED),
      inputKey: '_jobs/job_01JQ0000000000000000000000/input.json',
      metadata: null,
      ...(over.callbackUrl ? { callbackUrl: over.callbackUrl } : {}),
    },
    status: {
      state,
      startedAt: null,
      finishedAt: over.finishedAt === null ? null : isoMs(over.finishedAt ?? CREATED + 60_000),
      timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: null },
      result: null,
      error: null,
      ...(over.callback
        ? {
            callback: {
              status: over.callback,
              attempts: 1,
              nextAttemptAt: null,
              lastAttemptAt: null,
              lastStatusCode: null,
              lastError: null,
              finishedAt: null,
            },
          }
        : {}),
    },
  } as UtilityJobResource
}

describe('expiredJobs', () => {
  const finished = CREATED + 60_000

  it('keeps a finished job until its retention, counted from finishedAt, has run out', () => {
    expect(expiredJobs([job()], finished + RETENTION - 1, RETENTION)).toHaveLength(0)
    expect(expiredJobs([job()], finished + RETENTION, RETENTION)).toHaveLength(1)
  })

  it('never deletes a queued or running job, however old', () => {
    expect(
      expiredJobs(
        [job({ state: 'queued', finishedAt: null }), job({ state: 'running', finishedAt: null })],
        CREATED + 10 * RETENTION,
        RETENTION,
      ),
    ).toEqual([])
  })

  it('deletes failed and cancelled jobs like succeeded ones', () => {
    expect(
      expiredJobs([job({ state: 'failed' }), job({ state: 'cancelled' })], finished + RETENTION, RETENTION),
    ).toHaveLength(2)
  })

  it('waits for a pending callback to settle, then deletes', () => {
    const url = 'https://example.com/hook'
    expect(expiredJobs([job({ callbackUrl: url, callback: 'pending' })], finished + RETENTION, RETENTION)).toEqual([])
    expect(expiredJobs([job({ callbackUrl: url })], finished + RETENTION, RETENTION)).toEqual([]) // no attempt yet
    expect(
      expiredJobs(
        [job({ callbackUrl: url, callback: 'delivered' }), job({ callbackUrl: url, callback: 'failed' })],
        finished + RETENTION,
        RETENTION,
      ),
    ).toHaveLength(2)
    // A cancelled job never sends one.
    expect(expiredJobs([job({ callbackUrl: url, state: 'cancelled' })], finished + RETENTION, RETENTION)).toHaveLength(
      1,
    )
  })
})

describe('storage keys of a job', () => {
  it('are its outputs under <utility>/<creation day, UTC>/<job_id>/ and its manifests under _jobs/<job_id>/', () => {
    expect(storagePrefixesOf(job())).toEqual([
      'split-pdf/2026-03-01/job_01JQ0000000000000000000000/',
      '_jobs/job_01JQ0000000000000000000000/',
    ])
  })

  it('name their job id', () => {
    expect(jobIdOfKey('split-pdf/2026-03-01/job_01JQ0000000000000000000000/page-001.pdf')).toBe(
      'job_01JQ0000000000000000000000',
    )
    expect(jobIdOfKey('_jobs/job_01JQ0000000000000000000000/input.json')).toBe('job_01JQ0000000000000000000000')
    expect(jobIdOfKey('split-pdf/2026-03-01/not-a-job/x')).toBeNull()
    expect(jobIdOfKey('elsewhere.txt')).toBeNull()
  })
})
