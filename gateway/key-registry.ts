import type { CustomObjectsApi, ObjectCache } from '@kubernetes/client-node'
import { API_GROUP, API_VERSION, API_KEY, LABELS } from '../contract/api-group.js'
import { hashLabel } from '../contract/api-keys.js'
import type { ApiKeyResource } from '../contract/crd-schemas.js'

/**
 * Finds API keys by the SHA-256 of the presented key. Reads the watched cache (so revocation
 * takes effect as soon as the change is seen); a key created a moment ago that the watch has
 * not delivered yet is looked up once in the API, and unknown hashes are remembered briefly so
 * that guessing cannot load the API server.
 */
export class KeyRegistry {
  private readonly byHash = new Map<string, string>()
  private readonly misses = new Map<string, number>()

  constructor(
    private readonly cache: ObjectCache<ApiKeyResource>,
    private readonly custom: CustomObjectsApi,
    private readonly namespace: string,
    private readonly missTtlMs = 2000,
  ) {}

  /** Keeps the hash index in step with the cache; call on every watch event. */
  observe(event: 'add' | 'update' | 'delete', key: ApiKeyResource): void {
    if (event === 'delete') this.byHash.delete(key.spec.hash)
    else this.byHash.set(key.spec.hash, key.metadata.name)
  }

  async find(hash: string): Promise<ApiKeyResource | undefined> {
    const name = this.byHash.get(hash)
    if (name) {
      const cached = this.cache.get(name, this.namespace)
      if (cached && cached.spec.hash === hash) return cached
    }
    const missAt = this.misses.get(hash)
    if (missAt !== undefined && Date.now() - missAt < this.missTtlMs) return undefined
    const list = (await this.custom.listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: this.namespace,
      plural: API_KEY.plural,
      labelSelector: `${LABELS.keyHash}=${hashLabel(hash)}`,
    })) as { items: ApiKeyResource[] }
    const found = list.items.find((k) => k.spec.hash === hash)
    if (!found) {
      if (this.misses.size > 10_000) this.misses.clear()
      this.misses.set(hash, Date.now())
    }
    return found
  }
}
