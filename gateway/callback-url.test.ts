import { describe, expect, it } from 'vitest'
import { ApiError } from './api-error.js'
import { assertCallbackUrlAllowed } from './callback-url.js'

describe('assertCallbackUrlAllowed', () => {
  it('passes bodies without a callbackUrl and allowed destinations', () => {
    expect(() => assertCallbackUrlAllowed({ input: {} })).not.toThrow()
    expect(() => assertCallbackUrlAllowed({ callbackUrl: 'https://hooks.example.com/x' })).not.toThrow()
  })

  it('answers 400 invalid_request with a callbackUrl detail for a refused destination', () => {
    let caught: unknown
    try {
      assertCallbackUrlAllowed({ callbackUrl: 'https://169.254.169.254/latest/meta-data/' })
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(ApiError)
    const e = caught as ApiError
    expect(e.status).toBe(400)
    expect(e.code).toBe('invalid_request')
    expect(e.details).toEqual([{ path: 'callbackUrl', message: expect.stringContaining('link-local') }])
  })
})
