import { describe, expect, it } from 'vitest'
import type { ApiKeyResource, UtilityJobResource } from '../contract/crd-schemas.js'
import { entriesToRemove, keysToDelete } from './signing-secret-sweep.js'

const key = (n: number, revoked: boolean) =>
  ({
    metadata: { name: `key-0${n}` },
    spec: { keyId: `key_0${n}`, revokedAt: revoked ? '2026-11-24T10:00:00.000Z' : null },
  }) as unknown as ApiKeyResource
const job = (keyN: number, state: 'running' | 'succeeded', callback?: 'pending' | 'delivered') =>
  ({
    metadata: { name: `job-${keyN}-${state}` },
    spec: {
      jobId: 'job_X',
      apiKeyId: `key_0${keyN}`,
      mode: 'async',
      createdAt: '2026-11-24T09:00:00.000Z',
      ...(callback ? { callbackUrl: 'https://hooks.example.com/' } : {}),
    },
    status: { state, ...(callback ? { callback: { status: callback, attempts: 1 } } : {}) },
  }) as unknown as UtilityJobResource

describe('which signing secrets may go', () => {
  it("removes only revoked keys' entries, once none of their jobs is unfinished or has a callback to deliver", () => {
    const entries = ['workspace', 'playground', 'key-01', 'key-02', 'key-03', 'key-04', 'key-05', 'key-06']
    const keys = [key(1, false), key(2, true), key(3, true), key(4, true), key(5, true)]
    const jobs = [job(3, 'running'), job(4, 'succeeded', 'pending'), job(5, 'succeeded', 'delivered')]
    // key-01 active; key-03 still running; key-04 owes a callback; key-06 names no key (yet).
    expect(entriesToRemove(entries, keys, jobs)).toEqual(['key-02', 'key-05'])
  })
})

describe('which revoked keys may be deleted', () => {
  const DAY = 86_400_000
  const revokedAt = Date.parse('2026-11-24T10:00:00.000Z')
  it('only keys revoked longer than the retention ago, with no signing entry left and no job in flight', () => {
    const keys = [key(1, false), key(2, true), key(3, true), key(4, true)]
    const jobs = [job(3, 'succeeded', 'pending')]
    const left = new Set(['key-04'])
    // key-01 active; key-03 owes a callback; key-04 still has its entry.
    expect(keysToDelete(keys, left, jobs, revokedAt + 90 * DAY, 90 * DAY)).toEqual(['key-02'])
    // Not before the retention has passed.
    expect(keysToDelete(keys, left, jobs, revokedAt + 90 * DAY - 1, 90 * DAY)).toEqual([])
  })
})
