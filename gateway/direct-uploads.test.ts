import { describe, expect, it } from 'vitest'
import { ApiError } from './api-error.js'
import { parsePartTags } from './direct-uploads.js'

describe("a direct upload's completion body", () => {
  it('is empty for one part, or names parts with their ETags (quotes dropped)', () => {
    expect(parsePartTags(undefined)).toBeUndefined()
    expect(parsePartTags({})).toBeUndefined()
    expect(parsePartTags({ parts: [{ partNumber: 1, etag: '"abc"' }] })).toEqual([{ partNumber: 1, etag: 'abc' }])
  })

  it('refuses anything else with a 400, never an error of its own', () => {
    for (const body of [
      null,
      'parts',
      3,
      [],
      { parts: 'x' },
      { parts: [{ partNumber: 0, etag: 'a' }] },
      { parts: [], extra: 1 },
      { parts: [null] },
    ])
      expect(() => parsePartTags(body), JSON.stringify(body)).toThrow(ApiError)
  })
})
