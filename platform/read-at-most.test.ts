import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { readAtMost } from './read-at-most.js'

describe('readAtMost', () => {
  it('reads a stream up to its bound, and stops at the first byte past it, destroying the stream', async () => {
    const chunks = () => Readable.from([Buffer.from('abc'), Buffer.from('def')])
    expect((await readAtMost(chunks(), 6, () => new Error('too large'))).toString()).toBe('abcdef')
    const over = chunks()
    await expect(readAtMost(over, 5, () => new Error('too large'))).rejects.toThrow('too large')
    expect(over.destroyed).toBe(true)
  })
})
