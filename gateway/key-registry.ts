import type { CustomObjectsApi, ObjectCache } from '@kubernetes/client-node'
import { API_GROUP, API_VERSION, API_KEY, LABELS } from '../contract/api-group.js'
import { hashLabel } from '../contract/api-keys.js'
import type { ApiKeyResource } from '../contract/crd-schemas.js'

/**
 * A token bucket: `perSecond` tokens a second, at most `burst` saved up. Shared by every request,
 * so a flood of random keys costs the API server this much and no more.
 */
export class TokenBucket {
  private tokens: number
  private last: number

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst
    this.last = now()
  }

  take(): boolean {
    const t = this.now()
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond)
    this.last = t
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }
}

export interface KeyLookupApi {
  listByHashLabel(labelValue: string): Promise<ApiKeyResource[]>
}

/** The API-server side of a look-up: ApiKeys whose hash label matches. */
export function kubeKeyLookup(custom: CustomObjectsApi, namespace: string): KeyLookupApi {
  return {
    listByHashLabel: async (labelValue) =>
      (
        (await custom.listNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          namespace,
          plural: API_KEY.plural,
          labelSelector: `${LABELS.keyHash}=${labelValue}`,
        })) as { items: ApiKeyResource[] }
      ).items,
  }
}

/**
 * Finds API keys by the SHA-256 of the presented key. Reads the watched cache (so revocation
 * takes effect as soon as the change is seen). A hash the cache does not know is almost always a
 * wrong or random key; only a key created a moment ago, which the watch has not delivered yet,
 * is really there. So the API server is asked about unknown hashes only within a small budget
 * shared by all requests (DUTIL_KEY_LOOKUPS_PER_SECOND), one look-up per hash at a time, and
 * misses are remembered briefly: a flood of random keys costs a handful of API requests in all.
 * Past the budget an unknown key is simply unknown (401); the caller of a brand-new key that
 * lands there succeeds on its retry a moment later, once the watch has it.
 */
export class KeyRegistry {
  private readonly byHash = new Map<string, string>()
  private readonly misses = new Map<string, number>()
  private readonly inFlight = new Map<string, Promise<ApiKeyResource | undefined>>()
  private readonly budget: TokenBucket
  /** Look-ups made and refused for want of budget (exposed as metrics). */
  readonly counts = { apiLookups: 0, overBudget: 0 }

  constructor(
    private readonly cache: ObjectCache<ApiKeyResource>,
    private readonly api: KeyLookupApi,
    private readonly namespace: string,
    opts: { lookupsPerSecond?: number; budget?: TokenBucket; missTtlMs?: number; now?: () => number } = {},
  ) {
    const rate = opts.lookupsPerSecond ?? 5
    this.now = opts.now ?? Date.now
    this.missTtlMs = opts.missTtlMs ?? 2000
    this.budget = opts.budget ?? new TokenBucket(rate, Math.max(1, Math.ceil(rate)), this.now)
  }

  private readonly now: () => number
  private readonly missTtlMs: number

  /** Keeps the hash index in step with the cache; call on every watch event. */
  observe(event: 'add' | 'update' | 'delete', key: ApiKeyResource): void {
    if (event === 'delete') this.byHash.delete(key.spec.hash)
    else {
      this.byHash.set(key.spec.hash, key.metadata.name)
      this.misses.delete(key.spec.hash)
    }
  }

  async find(hash: string): Promise<ApiKeyResource | undefined> {
    const name = this.byHash.get(hash)
    if (name) {
      const cached = this.cache.get(name, this.namespace)
      if (cached && cached.spec.hash === hash) return cached
    }
    const missAt = this.misses.get(hash)
    if (missAt !== undefined && this.now() - missAt < this.missTtlMs) return undefined
    const pending = this.inFlight.get(hash)
    if (pending) return pending
    if (!this.budget.take()) {
      this.counts.overBudget++
      return undefined
    }
    const lookup = this.lookUp(hash).finally(() => this.inFlight.delete(hash))
    this.inFlight.set(hash, lookup)
    return lookup
  }

  private async lookUp(hash: string): Promise<ApiKeyResource | undefined> {
    this.counts.apiLookups++
    const found = (await this.api.listByHashLabel(hashLabel(hash))).find((k) => k.spec.hash === hash)
    if (!found) {
      if (this.misses.size > 10_000) this.misses.clear()
      this.misses.set(hash, this.now())
    }
    return found
  }
}
