import { CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node'
import { API_GROUP, API_GROUP_VERSION, API_KEY, API_VERSION, LABELS, MANAGED_BY } from '../contract/api-group.js'
import { DEFAULT_RATE_LIMIT, hashApiKey, hashLabel, keyPrefix, newApiKeyValue, newSigningSecret } from '../contract/api-keys.js'
import type { ApiKeyResource } from '../contract/crd-schemas.js'
import { newId, objectNameOf, ulidOf } from '../contract/ids.js'
import { isoMs } from '../contract/time.js'

export interface CreateKeyOptions {
  name: string
  utilities: string[]
  rateLimitPerMinute?: number
  expiresInDays?: number
}

export interface CreatedKey {
  id: string
  key: string
  signingSecret: string
}

export const SIGNING_SECRET_KEY = 'signingSecret'

/** API key management against ApiKey resources and their signing-secret Secrets. */
export class ApiKeyAdmin {
  private readonly custom: CustomObjectsApi
  private readonly core: CoreV1Api

  constructor(
    kc: KubeConfig,
    private readonly namespace: string,
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi)
    this.core = kc.makeApiClient(CoreV1Api)
  }

  private coords() {
    return { group: API_GROUP, version: API_VERSION, namespace: this.namespace, plural: API_KEY.plural }
  }

  async create(opts: CreateKeyOptions, now = Date.now()): Promise<CreatedKey> {
    const id = newId('key', now)
    const name = objectNameOf(id)
    const key = newApiKeyValue()
    const signingSecret = newSigningSecret()
    const hash = hashApiKey(key)
    const body: ApiKeyResource = {
      apiVersion: API_GROUP_VERSION,
      kind: 'ApiKey',
      metadata: { name, labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.keyHash]: hashLabel(hash) } },
      spec: {
        keyId: id,
        name: opts.name,
        prefix: keyPrefix(key),
        hash,
        utilities: opts.utilities.length ? opts.utilities : ['*'],
        rateLimitPerMinute: opts.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT,
        createdAt: isoMs(now),
        expiresAt: opts.expiresInDays ? isoMs(now + opts.expiresInDays * 86_400_000) : null,
        revokedAt: null,
        signingSecretName: `${name}-signing`,
      },
    }
    const created = (await this.custom.createNamespacedCustomObject({ ...this.coords(), body })) as ApiKeyResource
    await this.core.createNamespacedSecret({
      namespace: this.namespace,
      body: {
        metadata: {
          name: body.spec.signingSecretName,
          labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.apiKey]: name },
          ownerReferences: [{ apiVersion: API_GROUP_VERSION, kind: API_KEY.kind, name, uid: created.metadata.uid!, controller: true }],
        },
        type: 'Opaque',
        stringData: { [SIGNING_SECRET_KEY]: signingSecret },
      },
    })
    return { id, key, signingSecret }
  }

  /** Active keys first, then revoked ones, each newest first. */
  async list(): Promise<ApiKeyResource[]> {
    const res = (await this.custom.listNamespacedCustomObject(this.coords())) as { items: ApiKeyResource[] }
    return res.items.sort((a, b) => Number(!!a.spec.revokedAt) - Number(!!b.spec.revokedAt) || b.spec.createdAt.localeCompare(a.spec.createdAt))
  }

  async revoke(id: string, now = Date.now()): Promise<ApiKeyResource> {
    if (!ulidOf(id, 'key')) throw new Error(`${id} is not an API key id (key_...)`)
    return (await this.custom.patchNamespacedCustomObject(
      { ...this.coords(), name: objectNameOf(id), body: { spec: { revokedAt: isoMs(now) } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as ApiKeyResource
  }
}
