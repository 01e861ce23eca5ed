import { describe, expect, it } from 'vitest'
import { FRESH_SIGN_IN_MS, freshProviderSignIn } from './people.js'

describe('a first password for an identity-provider account', () => {
  const now = Date.parse('2026-11-26T12:00:00.000Z')
  it('needs a sign-in with the provider within the last five minutes', () => {
    expect(freshProviderSignIn({ method: 'oidc', createdAt: now - FRESH_SIGN_IN_MS }, now)).toBe(true)
    expect(freshProviderSignIn({ method: 'oidc', createdAt: now - FRESH_SIGN_IN_MS - 1 }, now)).toBe(false)
    expect(freshProviderSignIn({ method: 'password', createdAt: now }, now)).toBe(false)
    expect(freshProviderSignIn({ method: 'invite', createdAt: now }, now)).toBe(false)
  })
})
