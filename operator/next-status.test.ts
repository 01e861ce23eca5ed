import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { cancelledStatus, failedStatus, runningStatus, startedAtFor, succeededStatus } from './next-status.js'

const created = Date.parse('2026-11-22T10:00:00.500Z')
const uj = (mode: 'sync' | 'async' = 'async', status?: UtilityJobResource['status']): UtilityJobResource => ({
  apiVersion: 'dutil.io/v1alpha1',
  kind: 'UtilityJob',
  metadata: { name: 'job-x' },
  spec: { jobId: 'job_X', utility: 'split-pdf', mode, apiKeyId: 'k', apiKeyName: 'k', createdAt: new Date(created).toISOString(), inputKey: 'i', metadata: null },
  status,
})
const result = { files: [{ key: 'a', name: 'page-001.pdf', size: 10, contentType: 'application/pdf', pageNumber: 1 }], extras: { pageCount: 1 }, startedAt: '', upstreamMs: 40, storageMs: 7 }

describe('next status', () => {
  it('records the operator clock when it sees a start promptly, never before accept', () => {
    // Kubernetes keeps whole seconds: a start at 10:00:00 (really .900) seen at .950.
    expect(startedAtFor(uj(), Date.parse('2026-11-22T10:00:00Z'), created + 450)).toBe(created + 450)
    // Seen late (operator was down): the pod's own start, clamped to accept.
    expect(startedAtFor(uj(), Date.parse('2026-11-22T10:00:00Z'), created + 60_000)).toBe(created)
  })

  it('gives sync runs queueMs 0 from the start', () => {
    const s = runningStatus(uj('sync'), created + 2000, created + 2100)
    expect(s).toMatchObject({ state: 'running', startedAt: new Date(created).toISOString(), timings: { queueMs: 0 } })
  })

  it('fills result and every timing on success', () => {
    const running = runningStatus(uj(), created + 1000, created + 1000)
    const s = succeededStatus(uj('async', running), result, created + 1000, created + 3000)
    expect(s).toMatchObject({ state: 'succeeded', error: null, timings: { queueMs: 1000, upstreamMs: 40, storageMs: 7, totalMs: 3000 } })
    expect(s.result).toEqual({ files: result.files, extras: { pageCount: 1 } })
    expect(s.finishedAt).toBe(new Date(created + 3000).toISOString())
  })

  it('leaves startedAt and queueMs null for a job that failed before any runner started', () => {
    const s = failedStatus(uj(), { code: 'lost', message: 'x' }, null, created + 5000)
    expect(s).toMatchObject({ state: 'failed', startedAt: null, timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: 5000 }, result: null })
  })

  it('cancels with finishedAt and no start', () => {
    expect(cancelledStatus(uj(), created + 10)).toMatchObject({ state: 'cancelled', startedAt: null, finishedAt: new Date(created + 10).toISOString(), timings: { totalMs: 10 } })
  })
})
