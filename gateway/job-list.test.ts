import { describe, expect, it } from 'vitest'
import { newId } from '../contract/ids.js'
import type { JobRecord } from '../contract/job-view.js'
import { ApiError } from './api-error.js'
import { encodeCursor, listQueryFor, pageOf, parseListQuery } from './job-list.js'

function rec(at: number): JobRecord {
  const jobId = newId('job', at)
  return {
    spec: {
      jobId,
      utility: 'split-pdf',
      mode: 'async',
      apiKeyId: 'key_A',
      apiKeyName: 'k',
      createdAt: new Date(at).toISOString(),
      inputKey: 'i',
      metadata: null,
    },
  }
}

describe('the job list query', () => {
  it('turns a cursor into the keyset (createdAt, id) of the last job handed out', () => {
    const last = rec(Date.parse('2026-11-20T08:00:00.250Z'))
    const q = parseListQuery({
      limit: '5',
      status: 'failed',
      cursor: encodeCursor(last.spec.jobId, { status: 'failed' }),
    })
    expect(listQueryFor('key_A', q)).toEqual({
      apiKeyId: 'key_A',
      utility: undefined,
      state: 'failed',
      after: { createdAt: '2026-11-20T08:00:00.250Z', id: last.spec.jobId },
      limit: 5,
    })
  })

  it('refuses a cursor made for other filters, and a forged one', () => {
    const cursor = encodeCursor(rec(Date.now()).spec.jobId, { status: 'failed' })
    expect(() => parseListQuery({ cursor })).toThrow(ApiError)
    expect(() => parseListQuery({ cursor: Buffer.from('{"v":1,"b":"job_x"}').toString('base64url') })).toThrow(
      /not valid/,
    )
  })

  it('pages from limit + 1 rows: a next cursor only when there is more', () => {
    const rows = [3, 2, 1].map((d) => rec(Date.parse('2026-11-20T00:00:00Z') + d * 1000))
    const full = pageOf(rows, { limit: 2 })
    expect(full.items.map((i) => i.id)).toEqual([rows[0].spec.jobId, rows[1].spec.jobId])
    expect(parseListQuery({ cursor: full.nextCursor! }).before).toBe(rows[1].spec.jobId)
    expect(pageOf(rows.slice(0, 2), { limit: 2 }).nextCursor).toBeNull()
  })
})
