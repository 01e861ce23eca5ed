import { describe, expect, it } from 'vitest'
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../contract/limits.js'
import { ApiError } from './api-error.js'
import { idempotencyHash, readIdempotencyKey } from './idempotency.js'

describe('Idempotency-Key', () => {
  it('is optional, and taken as sent from 1 to 200 characters', () => {
    expect(readIdempotencyKey(undefined)).toBeUndefined()
    expect(readIdempotencyKey('a')).toBe('a')
    const longest = 'k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH)
    expect(readIdempotencyKey(longest)).toBe(longest)
    expect(readIdempotencyKey(' spaced key ')).toBe(' spaced key ')
  })

  it('refuses an empty key, a longer one and a repeated header as invalid_request naming the header', () => {
    for (const header of ['', 'k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH + 1), ['a', 'b']]) {
      let err: unknown
      try {
        readIdempotencyKey(header)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(ApiError)
      expect(err).toMatchObject({
        code: 'invalid_request',
        status: 400,
        details: [{ path: 'Idempotency-Key', message: 'must be 1 to 200 characters' }],
      })
    }
  })

  it('scopes a key to its API key: the same key from two API keys is two jobs, from one API key one', () => {
    const a = idempotencyHash('key_A', 'order-1')
    expect(a).toMatch(/^[0-9a-f]{40}$/)
    expect(idempotencyHash('key_A', 'order-1')).toBe(a)
    expect(idempotencyHash('key_B', 'order-1')).not.toBe(a)
    expect(idempotencyHash('key_A', 'order-2')).not.toBe(a)
  })
})
