import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { dayRange, summarizeUsage, usageRows } from './usage.js'

function job(p: {
  id: string
  createdAt: string
  key?: string
  utility?: string
  state?: 'queued' | 'succeeded' | 'failed' | 'cancelled'
  code?: string
  totalMs?: number
  upstreamMs?: number
  playgroundBy?: string
}): UtilityJobResource {
  const state = p.state ?? 'succeeded'
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: p.id.toLowerCase() },
    spec: {
      jobId: p.id,
      utility: p.utility ?? 'split-pdf',
      mode: 'async',
      apiKeyId: p.playgroundBy ? '' : (p.key ?? 'key_A'),
      apiKeyName: p.playgroundBy ? '' : `name-of-${p.key ?? 'key_A'}`,
      ...(p.playgroundBy ? { source: 'playground' as const, userEmail: p.playgroundBy } : {}),
      createdAt: p.createdAt,
      inputKey: 'x',
      metadata: null,
    },
    status: {
      state,
      startedAt: null,
      finishedAt: null,
      timings: { queueMs: 0, upstreamMs: p.upstreamMs ?? null, storageMs: null, totalMs: p.totalMs ?? null },
      result: null,
      error: state === 'failed' ? { code: p.code ?? 'upstream_error', message: 'x' } : null,
    },
  }
}

describe('usage rows', () => {
  const jobs = [
    job({ id: 'job_1', createdAt: '2026-11-01T10:00:00.000Z', totalMs: 100, upstreamMs: 60 }),
    job({
      id: 'job_2',
      createdAt: '2026-11-01T23:59:59.999Z',
      state: 'failed',
      code: 'upstream_rejected',
      totalMs: 50,
      upstreamMs: 10,
    }),
    job({ id: 'job_3', createdAt: '2026-11-02T00:00:00.000Z', key: 'key_B', utility: 'zip-files', state: 'queued' }),
    job({ id: 'job_4', createdAt: '2026-11-02T08:00:00.000Z', playgroundBy: 'ada@example.com', totalMs: 30 }),
    job({ id: 'job_5', createdAt: '2026-11-02T09:00:00.000Z', state: 'failed', code: 'upstream_rejected' }),
    job({ id: 'job_6', createdAt: '2026-11-02T09:30:00.000Z', state: 'cancelled' }),
  ]

  it('counts jobs per UTC day, key (or playground user) and utility, with outcomes and times', () => {
    const rows = usageRows(jobs)
    expect(rows.find((r) => r.day === '2026-11-01')).toEqual({
      day: '2026-11-01',
      source: 'api',
      keyId: 'key_A',
      keyName: 'name-of-key_A',
      userEmail: '',
      utility: 'split-pdf',
      jobs: 2,
      succeeded: 1,
      failed: 1,
      cancelled: 0,
      errors: { upstream_rejected: 1 },
      totalMs: 150,
      upstreamMs: 70,
      outputBytes: 0,
    })
    expect(rows.filter((r) => r.day === '2026-11-02')).toHaveLength(3)
    expect(rows.find((r) => r.source === 'playground')).toMatchObject({
      keyId: '',
      userEmail: 'ada@example.com',
      jobs: 1,
      succeeded: 1,
      totalMs: 30,
    })
  })

  it('summarizes a range with every day present, per key, per utility and per error code', () => {
    const s = summarizeUsage(usageRows(jobs), dayRange('2026-10-31', '2026-11-03'))
    expect(s.days.map((d) => [d.day, d.jobs])).toEqual([
      ['2026-10-31', 0],
      ['2026-11-01', 2],
      ['2026-11-02', 4],
      ['2026-11-03', 0],
    ])
    expect(s.total).toEqual({ jobs: 6, succeeded: 2, failed: 2, cancelled: 1, totalMs: 180, upstreamMs: 70 })
    expect(s.byKey.map((k) => [k.keyName || k.userEmail, k.jobs])).toEqual([
      ['name-of-key_A', 4],
      ['ada@example.com', 1],
      ['name-of-key_B', 1],
    ])
    expect(s.byUtility.map((u) => [u.utility, u.jobs])).toEqual([
      ['split-pdf', 5],
      ['zip-files', 1],
    ])
    expect(s.byErrorCode).toEqual([{ code: 'upstream_rejected', count: 2 }])
  })

  it('leaves out rows outside the range', () => {
    expect(summarizeUsage(usageRows(jobs), dayRange('2026-11-02', '2026-11-02')).total.jobs).toBe(4)
  })
})
