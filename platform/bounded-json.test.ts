import { describe, expect, it } from 'vitest'
import { JsonBoundError, nestsDeeperThan, parseBoundedJson } from './bounded-json.js'

describe('bounded JSON', () => {
  it('measures nesting outside strings only', () => {
    expect(nestsDeeperThan('{"a":[1,{"b":[]}]}', 4)).toBe(false)
    expect(nestsDeeperThan('{"a":[1,{"b":[]}]}', 3)).toBe(true)
    // Brackets inside strings, escaped quotes included, do not count.
    expect(nestsDeeperThan('{"a":"[[[[[\\"[[[["}', 1)).toBe(false)
  })

  it('refuses a document 100,000 levels deep without recursing, and parses one within the bound', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    expect(() => parseBoundedJson(deep)).toThrow(JsonBoundError)
    expect(() => parseBoundedJson(deep)).toThrow('nested deeper than 32 levels')
    expect(parseBoundedJson('{"files":[{"name":"a"}]}')).toEqual({ files: [{ name: 'a' }] })
  })

  it('reports malformed text as a syntax error', () => {
    expect(() => parseBoundedJson('{"a":')).toThrow(expect.objectContaining({ bound: 'syntax' }))
  })
})
