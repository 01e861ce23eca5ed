import type { ObjectCache } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { hashApiKey, hashLabel, newApiKeyValue } from '../contract/api-keys.js'
import type { ApiKeyResource } from '../contract/crd-schemas.js'
import { KeyRegistry, TokenBucket, type KeyLookupApi } from './key-registry.js'

const NS = 'dutil'
const apiKey = (hash: string, name = `key-${hash.slice(0, 8)}`) =>
  ({ metadata: { name, namespace: NS }, spec: { hash } }) as unknown as ApiKeyResource

function setup(stored: ApiKeyResource[] = [], lookupsPerSecond = 5) {
  let t = 1_000_000
  const cached = new Map<string, ApiKeyResource>()
  const cache = {
    get: (name: string) => cached.get(name),
    list: () => [...cached.values()],
  } as unknown as ObjectCache<ApiKeyResource>
  const calls: string[] = []
  const api: KeyLookupApi = {
    listByHashLabel: async (label) => {
      calls.push(label)
      return stored.filter((k) => hashLabel(k.spec.hash) === label)
    },
  }
  const registry = new KeyRegistry(cache, api, NS, { lookupsPerSecond, now: () => t })
  return { registry, calls, cached, advance: (ms: number) => (t += ms) }
}

describe('token bucket', () => {
  it('allows a burst, then the rate', () => {
    let t = 0
    const b = new TokenBucket(5, 5, () => t)
    expect(Array.from({ length: 8 }, () => b.take()).filter(Boolean)).toHaveLength(5)
    t += 200
    expect(b.take()).toBe(true)
    expect(b.take()).toBe(false)
    t += 10_000
    expect(Array.from({ length: 8 }, () => b.take()).filter(Boolean)).toHaveLength(5)
  })
})

describe('key registry', () => {
  it('answers known keys from the cache without asking the API', async () => {
    const h = hashApiKey(newApiKeyValue())
    const { registry, calls, cached } = setup()
    const k = apiKey(h)
    cached.set(k.metadata.name, k)
    registry.observe('add', k)
    expect(await registry.find(h)).toBe(k)
    expect(calls).toEqual([])
  })

  it('finds a key created a moment ago that the watch has not delivered yet', async () => {
    const h = hashApiKey(newApiKeyValue())
    const { registry, calls } = setup([apiKey(h)])
    expect((await registry.find(h))?.spec.hash).toBe(h)
    expect(calls).toHaveLength(1)
  })

  it('costs the API server at most the budget for 1,000 distinct random keys, whatever their number', async () => {
    const { registry, calls, advance } = setup([], 5)
    const hashes = Array.from({ length: 1000 }, () => hashApiKey(newApiKeyValue()))
    // All at once: the burst of five, and nothing more.
    expect((await Promise.all(hashes.map((h) => registry.find(h)))).every((k) => k === undefined)).toBe(true)
    expect(calls).toHaveLength(5)
    expect(registry.counts).toEqual({ apiLookups: 5, overBudget: 995 })
    // Spread over two seconds: five a second more.
    for (let i = 0; i < 20; i++) {
      advance(100)
      await Promise.all(hashes.slice(i * 50, i * 50 + 50).map((h) => registry.find(h)))
    }
    expect(calls.length).toBeLessThanOrEqual(5 + 10)
  })

  it('asks once for one hash presented many times at once, and remembers a miss briefly', async () => {
    const h = hashApiKey(newApiKeyValue())
    const { registry, calls, advance } = setup([], 100)
    await Promise.all(Array.from({ length: 20 }, () => registry.find(h)))
    expect(calls).toHaveLength(1)
    advance(1000)
    await registry.find(h)
    expect(calls).toHaveLength(1)
    advance(1500)
    await registry.find(h)
    expect(calls).toHaveLength(2)
  })
})
