import { describe, expect, it } from 'vitest'
import type { StoredFile } from './runner-protocol.js'
import { boundedStatus, hasOmittedFiles } from './status-budget.js'

const file = (i: number, pad = 0): StoredFile => ({
  key: `unzip-files/d/job/${'x'.repeat(pad)}${i}`,
  name: `${i}`,
  size: 1,
  contentType: 'text/plain',
  path: `${i}`,
})
const status = (files: StoredFile[]) => ({
  state: 'succeeded' as const,
  result: {
    files,
    extras: { fileCount: files.length } as Record<string, unknown>,
    filesOmitted: undefined as number | undefined,
  },
})

describe('status budget', () => {
  it('keeps a small result as it is', () => {
    const s = status([file(1), file(2)])
    expect(boundedStatus(s)).toBe(s)
    expect(hasOmittedFiles(s)).toBe(false)
  })

  it('keeps the leading files that fit and counts the rest as omitted', () => {
    const files = Array.from({ length: 100 }, (_, i) => file(i, 900))
    const b = boundedStatus(status(files), 10_000)
    expect(b.result.files.length).toBeGreaterThan(5)
    expect(b.result.files.length).toBeLessThan(12)
    expect(b.result.files).toEqual(files.slice(0, b.result.files.length))
    expect(b.result.filesOmitted).toBe(100 - b.result.files.length)
    expect(Buffer.byteLength(JSON.stringify(b.result.files))).toBeLessThanOrEqual(10_000)
    expect(hasOmittedFiles(b)).toBe(true)
    expect(b.result.extras).toEqual({ fileCount: 100 })
  })
})
