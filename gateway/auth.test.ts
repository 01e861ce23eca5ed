import type { Context } from 'koa'
import { describe, expect, it } from 'vitest'
import { hashApiKey, newApiKeyValue } from '../contract/api-keys.js'
import type { ApiKeyResource } from '../contract/crd-schemas.js'
import { ApiError } from './api-error.js'
import { authenticate, checkKeyUsable } from './auth.js'
import type { KeyRegistry } from './key-registry.js'
import type { KeyUsage } from './key-usage.js'

const NOW = Date.parse('2026-11-24T10:00:00Z')

function keyResource(value: string, spec: Partial<ApiKeyResource['spec']> = {}): ApiKeyResource {
  return {
    metadata: { name: 'key-object', namespace: 'dutil' },
    spec: {
      keyId: 'key_01ABC',
      name: 'ci',
      hash: hashApiKey(value),
      utilities: ['split-pdf'],
      rateLimitPerMinute: 60,
      createdAt: '2026-11-01T00:00:00.000Z',
      ...spec,
    },
  } as unknown as ApiKeyResource
}

/** A registry that knows the given keys by hash and records what it was asked. */
function registryOf(...keys: ApiKeyResource[]) {
  const asked: string[] = []
  const registry = {
    find: async (hash: string) => {
      asked.push(hash)
      return keys.find((k) => k.spec.hash === hash)
    },
  } as unknown as KeyRegistry
  return { registry, asked }
}

function contextWith(authorization?: string) {
  const state: { key?: unknown } = {}
  const ctx = {
    get: (name: string) => (name === 'Authorization' ? (authorization ?? '') : ''),
    state,
  } as unknown as Context
  return { ctx, state }
}

async function refusal(run: () => Promise<unknown>): Promise<ApiError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(ApiError)
  return err as ApiError
}

describe('checkKeyUsable', () => {
  it('turns a usable key into what the request carries', () => {
    const value = newApiKeyValue()
    expect(checkKeyUsable(keyResource(value, { expiresAt: '2026-12-01T00:00:00.000Z' }), NOW)).toEqual({
      id: 'key_01ABC',
      name: 'ci',
      objectName: 'key-object',
      utilities: ['split-pdf'],
      rateLimitPerMinute: 60,
      owner: 'key:key_01ABC',
    })
    // A key made in the console counts with its creator; one that names an owner, with that owner.
    const byAna = keyResource(value, { createdBy: { userId: 'u1', email: 'ana@example.com' } })
    expect(checkKeyUsable(byAna, NOW).owner).toBe('owner:ana@example.com')
    expect(checkKeyUsable(keyResource(value, { owner: 'billing' }), NOW).owner).toBe('owner:billing')
  })

  it('refuses a revoked key and a key at or past its expiry with 401 invalid_token', () => {
    const value = newApiKeyValue()
    for (const [spec, message] of [
      [{ revokedAt: '2026-11-20T00:00:00.000Z' }, 'This API key has been revoked.'],
      [{ expiresAt: '2026-11-24T10:00:00.000Z' }, 'This API key has expired.'],
      [{ expiresAt: '2026-11-01T00:00:00.000Z' }, 'This API key has expired.'],
    ] as const) {
      let err: unknown
      try {
        checkKeyUsable(keyResource(value, spec), NOW)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(ApiError)
      expect(err).toMatchObject({
        code: 'unauthorized',
        status: 401,
        message,
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      })
    }
  })
})

describe('authenticate', () => {
  const value = newApiKeyValue()

  it('asks for a Bearer key when none is sent, or sent another way, without a look-up', async () => {
    const { registry, asked } = registryOf(keyResource(value))
    for (const header of [undefined, `Basic ${value}`, value, `Bearer`, `Bearer ${value} extra`]) {
      const { ctx } = contextWith(header)
      const err = await refusal(() => authenticate(registry)(ctx, async () => {}))
      expect(err).toMatchObject({
        code: 'unauthorized',
        message: 'Send your API key as Authorization: Bearer <API_KEY>.',
        headers: { 'WWW-Authenticate': 'Bearer' },
      })
    }
    expect(asked).toEqual([])
  })

  it('refuses a value that is not shaped like a key without a look-up, and an unknown key after one', async () => {
    const { registry, asked } = registryOf(keyResource(value))
    const malformed = await refusal(() => authenticate(registry)(contextWith('Bearer not-a-key').ctx, async () => {}))
    expect(malformed).toMatchObject({
      code: 'unauthorized',
      message: 'The API key is not valid.',
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    })
    expect(asked).toEqual([])
    const other = newApiKeyValue()
    const unknown = await refusal(() => authenticate(registry)(contextWith(`Bearer ${other}`).ctx, async () => {}))
    expect(unknown).toMatchObject({ code: 'unauthorized', message: 'The API key is not valid.' })
    // Only the hash is looked up, never the key itself.
    expect(asked).toEqual([hashApiKey(other)])
  })

  it('lets a valid key through with the key on the request state, and records its use', async () => {
    const { registry } = registryOf(keyResource(value))
    const touched: string[] = []
    const usage = { touch: (id: string, object: string) => touched.push(`${id} ${object}`) } as unknown as KeyUsage
    const { ctx, state } = contextWith(`Bearer ${value}`)
    let reached = false
    await authenticate(registry, usage)(ctx, async () => {
      reached = true
    })
    expect(reached).toBe(true)
    expect(state.key).toMatchObject({ id: 'key_01ABC', objectName: 'key-object', utilities: ['split-pdf'] })
    expect(touched).toEqual(['key_01ABC key-object'])
  })

  it('does not run the route for a revoked key, and does not count its use', async () => {
    const { registry } = registryOf(keyResource(value, { revokedAt: '2026-11-20T00:00:00.000Z' }))
    const touched: string[] = []
    const usage = { touch: (id: string) => touched.push(id) } as unknown as KeyUsage
    let reached = false
    const err = await refusal(() =>
      authenticate(registry, usage)(contextWith(`Bearer ${value}`).ctx, async () => {
        reached = true
      }),
    )
    expect(err.message).toBe('This API key has been revoked.')
    expect(reached).toBe(false)
    expect(touched).toEqual([])
  })
})
