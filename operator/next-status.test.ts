import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import {
  admittedSyncStatus,
  cancelledStatus,
  failedStatus,
  progressUpdate,
  runningStatus,
  startedAtFor,
  succeededStatus,
} from './next-status.js'

const created = Date.parse('2026-11-22T10:00:00.500Z')
const uj = (mode: 'sync' | 'async' = 'async', status?: UtilityJobResource['status']): UtilityJobResource => ({
  apiVersion: 'dutil.io/v1alpha1',
  kind: 'UtilityJob',
  metadata: { name: 'job-x' },
  spec: {
    jobId: 'job_X',
    utility: 'split-pdf',
    mode,
    apiKeyId: 'k',
    apiKeyName: 'k',
    createdAt: new Date(created).toISOString(),
    inputKey: 'i',
    metadata: null,
  },
  status,
})
const result = {
  files: [{ key: 'a', name: 'page-001.pdf', size: 10, contentType: 'application/pdf', pageNumber: 1 }],
  extras: { pageCount: 1 },
  startedAt: '',
  upstreamMs: 40,
  storageMs: 7,
}

describe('next status', () => {
  it('records the operator clock when it sees a start promptly, never before accept', () => {
    // Kubernetes keeps whole seconds: a start at 10:00:00 (really .900) seen at .950.
    expect(startedAtFor(uj(), Date.parse('2026-11-22T10:00:00Z'), created + 450)).toBe(created + 450)
    // Seen late (operator was down): the pod's own start, clamped to accept.
    expect(startedAtFor(uj(), Date.parse('2026-11-22T10:00:00Z'), created + 60_000)).toBe(created)
  })

  it('gives sync runs admitted on arrival queueMs 0, and those that waited for a slot their wait', () => {
    const atOnce = admittedSyncStatus(uj('sync'), false, created + 30)
    expect(atOnce).toMatchObject({
      state: 'running',
      startedAt: new Date(created).toISOString(),
      timings: { queueMs: 0 },
    })
    // The runner's start keeps the start admission gave.
    expect(runningStatus(uj('sync', atOnce), created + 2000, created + 2100)).toMatchObject({
      startedAt: new Date(created).toISOString(),
      timings: { queueMs: 0 },
    })
    const waited = admittedSyncStatus(uj('sync'), true, created + 4000)
    expect(waited).toMatchObject({
      state: 'running',
      startedAt: new Date(created + 4000).toISOString(),
      timings: { queueMs: 4000 },
    })
    expect(runningStatus(uj('sync', waited), created + 5000, created + 5100).timings.queueMs).toBe(4000)
  })

  it('fills result and every timing on success', () => {
    const running = runningStatus(uj(), created + 1000, created + 1000)
    const s = succeededStatus(uj('async', running), result, created + 1000, created + 3000)
    expect(s).toMatchObject({
      state: 'succeeded',
      error: null,
      timings: { queueMs: 1000, upstreamMs: 40, storageMs: 7, totalMs: 3000 },
    })
    expect(s.result).toEqual({ files: result.files, extras: { pageCount: 1 } })
    expect(s.finishedAt).toBe(new Date(created + 3000).toISOString())
  })

  it('leaves startedAt and queueMs null for a job that failed before any runner started', () => {
    const s = failedStatus(uj(), { code: 'lost', message: 'x' }, null, created + 5000)
    expect(s).toMatchObject({
      state: 'failed',
      startedAt: null,
      timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: 5000 },
      result: null,
    })
  })

  it('cancels with finishedAt and no start', () => {
    expect(cancelledStatus(uj(), created + 10)).toMatchObject({
      state: 'cancelled',
      startedAt: null,
      finishedAt: new Date(created + 10).toISOString(),
      timings: { totalMs: 10 },
    })
  })

  describe('progress', () => {
    const at = '2026-11-22T10:00:02.250Z'
    it('turns a runner report into the status field, with the summary kubectl shows', () => {
      expect(progressUpdate(undefined, { done: 120, total: 500, at }, 'pages')).toEqual({
        done: 120,
        total: 500,
        unit: 'pages',
        updatedAt: at,
        summary: '120/500 pages',
      })
      expect(progressUpdate(undefined, { done: 3, total: null, at }, 'files')).toMatchObject({ summary: '3 files' })
    })

    it('writes nothing when the count did not move, and ignores what a runner cannot have meant', () => {
      const current = progressUpdate(undefined, { done: 120, total: 500, at }, 'pages')!
      expect(progressUpdate(current, { done: 120, total: 500, at: '2026-11-22T10:00:09.000Z' }, 'pages')).toBeNull()
      for (const bad of [
        null,
        'x',
        {},
        { done: -1, total: 5, at },
        { done: 1.5, total: 5, at },
        { done: 1, total: '5', at },
        { done: 1, total: 5, at: 'soon' },
        { done: 1, total: 5 },
      ]) {
        expect(progressUpdate(current, bad, 'pages')).toBeNull()
      }
      // Never past the total.
      expect(progressUpdate(undefined, { done: 900, total: 500, at }, 'pages')).toMatchObject({
        done: 500,
        summary: '500/500 pages',
      })
    })

    it('keeps the last progress when the job fails, and shows the whole amount when it succeeds', () => {
      const progress = progressUpdate(undefined, { done: 120, total: 500, at }, 'pages')!
      const running = { ...runningStatus(uj(), created + 1000, created + 1000), progress }
      expect(
        failedStatus(uj('async', running), { code: 'upstream_error', message: 'x' }, created + 1000, created + 3000)
          .progress,
      ).toEqual(progress)
      expect(succeededStatus(uj('async', running), result, created + 1000, created + 3000).progress).toMatchObject({
        done: 500,
        total: 500,
        summary: '500/500 pages',
      })
      // A job too short for the operator to see a report: the runner's last one, from its result manifest.
      const short = uj('async', runningStatus(uj(), created, created))
      expect(
        succeededStatus(short, { ...result, progress: { done: 3, total: 3, at } }, created, created + 1, 'pages')
          .progress,
      ).toEqual({
        done: 3,
        total: 3,
        unit: 'pages',
        updatedAt: at,
        summary: '3/3 pages',
      })
      // A malformed one is ignored; a utility that counts nothing has none.
      expect(
        succeededStatus(short, { ...result, progress: { done: 'x' } as never }, created, created + 1, 'pages').progress,
      ).toBeUndefined()
      expect(succeededStatus(short, result, created, created + 1).progress).toBeUndefined()
    })
  })
})
