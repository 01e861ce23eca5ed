import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { expiredPartitionDays } from './job-record-upkeep.js'
import { removableAt } from './reconciler.js'

const DAY = 86_400_000

describe('expiredPartitionDays', () => {
  it('drops only whole days older than the retention', () => {
    const now = Date.parse('2026-11-23T10:00:00Z')
    const days = ['2026-08-24', '2026-08-25', '2026-08-26', '2026-11-23', '2026-11-30']
    expect(expiredPartitionDays(days, now, 90 * DAY)).toEqual(['2026-08-24'])
    expect(expiredPartitionDays(days, now, 1 * DAY)).toEqual(['2026-08-24', '2026-08-25', '2026-08-26'])
  })
})

function finished(
  over: Partial<NonNullable<UtilityJobResource['status']>> = {},
  callbackUrl?: string,
): UtilityJobResource {
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: 'job-x' },
    spec: {
      jobId: 'job_X',
      utility: 'split-pdf',
      mode: 'async',
      apiKeyId: 'key_A',
      apiKeyName: 'k',
      createdAt: '2026-11-23T10:00:00.000Z',
      inputKey: 'i',
      metadata: null,
      ...(callbackUrl ? { callbackUrl } : {}),
    },
    status: {
      state: 'succeeded',
      startedAt: '2026-11-23T10:00:01.000Z',
      finishedAt: '2026-11-23T10:00:05.000Z',
      timings: { queueMs: 1, upstreamMs: 1, storageMs: 1, totalMs: 5000 },
      result: { files: [], extras: {} },
      error: null,
      ...over,
    },
  }
}

describe('removableAt', () => {
  it('is the grace after the job finished', () => {
    expect(removableAt(finished(), 3_600_000)).toBe(Date.parse('2026-11-23T11:00:05.000Z'))
  })
  it('is never while the job runs or its callback is pending', () => {
    expect(removableAt(finished({ state: 'running', finishedAt: null }), 0)).toBeNull()
    expect(removableAt(finished({}, 'https://hooks.example/x'), 0)).toBeNull()
  })
  it('counts from the callback settling when it settled after the job', () => {
    const cb = {
      status: 'failed' as const,
      attempts: 8,
      nextAttemptAt: null,
      lastAttemptAt: '2026-11-23T10:21:00.000Z',
      lastStatusCode: 500,
      lastError: 'x',
      finishedAt: '2026-11-23T10:21:00.000Z',
    }
    expect(removableAt(finished({ callback: cb }, 'https://hooks.example/x'), 1000)).toBe(
      Date.parse('2026-11-23T10:21:01.000Z'),
    )
  })
})
