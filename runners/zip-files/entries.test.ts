import { describe, expect, it } from 'vitest'
import { rejected } from '../common/runner-error.js'
import { capped, entryDate, namedFailure, storeUncompressed } from './entries.js'

async function drain(it: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0
  for await (const c of it) n += c.length
  return n
}
async function* parts(...sizes: number[]) {
  for (const s of sizes) yield Buffer.alloc(s)
}

describe('zip-files entries', () => {
  it('stores already-compressed formats and deflates the rest', () => {
    expect(storeUncompressed('images/a.PNG')).toBe(true)
    expect(storeUncompressed('b.zip')).toBe(true)
    expect(storeUncompressed('report.pdf')).toBe(false)
    expect(storeUncompressed('notes')).toBe(false)
  })

  it("takes the server's Last-Modified when it fits a zip date, else the fallback", () => {
    const fallback = new Date('2025-01-01T00:00:00Z')
    expect(entryDate('Wed, 21 Oct 2015 07:28:00 GMT', fallback).toISOString()).toBe('2015-10-21T07:28:00.000Z')
    expect(entryDate('Thu, 01 Jan 1970 00:00:00 GMT', fallback)).toBe(fallback)
    expect(entryDate('garbage', fallback)).toBe(fallback)
    expect(entryDate(undefined, fallback)).toBe(fallback)
  })

  it('names the file in a download failure and keeps its upstream status', () => {
    const err = namedFailure(3, 'b.png', rejected('Downloading http://x/b.png failed: the server answered 403.', 403))
    expect(err.toFailure()).toEqual({
      code: 'upstream_rejected',
      message: 'files.3 ("b.png"): Downloading http://x/b.png failed: the server answered 403.',
      upstreamStatus: 403,
    })
    expect(namedFailure(0, 'a', new Error('socket hang up')).message).toBe(
      'files.0 ("a"): downloading failed: socket hang up',
    )
  })

  it('caps each file and the whole run', async () => {
    const limits = { maxFileBytes: 100, maxTotalBytes: 150 }
    const budget = { total: 0 }
    expect(await drain(capped(parts(50, 50), budget, limits))).toBe(100)
    await expect(drain(capped(parts(60), budget, limits))).rejects.toMatchObject({
      message: expect.stringContaining('together are larger'),
    })
    await expect(drain(capped(parts(60, 60), { total: 0 }, limits))).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringContaining('limit per file'),
    })
  })
})
