import { describe, expect, it } from 'vitest'
import { createdAtOfId, FILE_BATCH_CHARS, newFileBatch, newFileId, idMaker, ulidOf } from './ids.js'

describe('file ids', () => {
  it("a batch's ids are valid, distinct, of its time, and share exactly the batch's 22 characters", () => {
    const at = Date.parse('2026-11-28T10:00:00.000Z')
    const next = newFileBatch(at)
    const ids = Array.from({ length: 40 }, () => next())
    expect(new Set(ids).size).toBe(40)
    for (const id of ids) {
      expect(ulidOf(id, 'file')).not.toBeNull()
      expect(createdAtOfId(id, 'file')).toBe('2026-11-28T10:00:00.000Z')
      expect(id.slice(0, 5 + FILE_BATCH_CHARS)).toBe(ids[0].slice(0, 5 + FILE_BATCH_CHARS))
    }
    // Another batch of the same millisecond shares its time, not its random part.
    const other = newFileBatch(at)()
    expect(other.slice(0, 15)).toBe(ids[0].slice(0, 15))
    expect(other.slice(0, 5 + FILE_BATCH_CHARS)).not.toBe(ids[0].slice(0, 5 + FILE_BATCH_CHARS))
  })

  it('ids made one at a time in one millisecond share no batch prefix (never monotonic)', () => {
    const at = Date.now()
    const ids = Array.from({ length: 1000 }, () => newFileId(at))
    expect(new Set(ids.map((id) => id.slice(0, 5 + FILE_BATCH_CHARS))).size).toBe(1000)
  })
})

describe('public ids', () => {
  it('carry the time they were made at, also when the clock stepped back; ids of one millisecond increase', () => {
    const newId = idMaker()
    const later = Date.parse('2026-11-30T10:00:00.500Z')
    const earlier = later - 1500
    const first = newId('job', later)
    const back = newId('job', earlier)
    expect(createdAtOfId(first, 'job')).toBe('2026-11-30T10:00:00.500Z')
    expect(createdAtOfId(back, 'job')).toBe('2026-11-30T09:59:59.000Z')
    const same = [newId('job', later), newId('job', later), newId('job', later)]
    expect([...same].sort()).toEqual(same)
    expect(same.every((id) => createdAtOfId(id, 'job') === '2026-11-30T10:00:00.500Z')).toBe(true)
  })
})
