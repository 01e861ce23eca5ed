import { CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node'
import { API_GROUP, API_GROUP_VERSION, API_KEY, API_VERSION, LABELS, MANAGED_BY } from './api-group.js'
import {
  DEFAULT_RATE_LIMIT,
  hashApiKey,
  hashLabel,
  keyPrefix,
  newApiKeyValue,
  newSigningSecret,
  SIGNING_SECRET_KEY,
  signingSecretNameFor,
  WORKSPACE_SIGNING_SECRET,
} from './api-keys.js'
import type { ApiKeyResource } from './crd-schemas.js'
import { newId, objectNameOf, ulidOf } from './ids.js'
import { apiStatus } from './kube.js'
import { isoMs } from './time.js'

export interface CreateKeyOptions {
  name: string
  utilities: string[]
  rateLimitPerMinute?: number
  expiresInDays?: number
  /** The console user creating the key (keys made with the CLI have none). */
  createdBy?: { userId: string; email: string }
}

export interface CreatedKey {
  id: string
  key: string
  signingSecret: string
}

export { SIGNING_SECRET_KEY }

/** A key's effective signing secret: its own, or the workspace's for a key that has none yet. */
export interface RevealedSecret {
  id: string
  signingSecret: string
  source: 'key' | 'workspace'
}

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
        signingSecretName: signingSecretNameFor(name),
        ...(opts.createdBy ? { createdBy: opts.createdBy } : {}),
      },
    }
    // The signing Secret first: a key never exists, even for a moment or after a crash, without
    // its own secret (its callbacks would be signed with the workspace secret). A crash after the
    // Secret leaves only an unused Secret that names no key.
    const secret = this.keySecret(name, body.spec.signingSecretName, signingSecret)
    await this.core.createNamespacedSecret({ namespace: this.namespace, body: secret })
    const created = (await this.custom.createNamespacedCustomObject({ ...this.coords(), body })) as ApiKeyResource
    // Then the Secret is owned by the key, so deleting the key deletes it too.
    await this.core
      .patchNamespacedSecret({ name: secret.metadata.name, namespace: this.namespace, body: { metadata: { ownerReferences: [this.ownerOf(created)] } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
      .catch(() => {
        // Not fatal: the key works; its Secret only outlives the key if the key is deleted.
      })
    return { id, key, signingSecret }
  }

  private ownerOf(apiKey: ApiKeyResource) {
    return { apiVersion: API_GROUP_VERSION, kind: API_KEY.kind, name: apiKey.metadata.name, uid: apiKey.metadata.uid!, controller: true }
  }

  /** The Secret holding a key's own signing secret; owned by the ApiKey once that exists. */
  private keySecret(keyName: string, secretName: string | undefined, signingSecret: string, owner?: ApiKeyResource) {
    return {
      metadata: {
        name: secretName || signingSecretNameFor(keyName),
        labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.apiKey]: keyName },
        ...(owner ? { ownerReferences: [this.ownerOf(owner)] } : {}),
      },
      type: 'Opaque',
      stringData: { [SIGNING_SECRET_KEY]: signingSecret },
    }
  }

  private async get(id: string): Promise<ApiKeyResource> {
    if (!ulidOf(id, 'key')) throw new Error(`${id} is not an API key id (key_...)`)
    return (await this.custom.getNamespacedCustomObject({ ...this.coords(), name: objectNameOf(id) })) as ApiKeyResource
  }

  private async readSecret(name: string): Promise<string | null> {
    try {
      const s = await this.core.readNamespacedSecret({ name, namespace: this.namespace })
      const value = s.data?.[SIGNING_SECRET_KEY]
      return value ? Buffer.from(value, 'base64').toString('utf8') : null
    } catch (err) {
      if (apiStatus(err) === 404) return null
      throw err
    }
  }

  /**
   * Gives the key a new signing secret of its own (a key that used the workspace secret gets
   * one). The callback controller reads the Secret at every attempt, so the next attempt of
   * every pending callback is signed with the new secret.
   */
  async rotateSecret(id: string): Promise<RevealedSecret> {
    const apiKey = await this.get(id)
    const signingSecret = newSigningSecret()
    const body = this.keySecret(apiKey.metadata.name, apiKey.spec.signingSecretName, signingSecret, apiKey)
    try {
      await this.core.replaceNamespacedSecret({ name: body.metadata.name, namespace: this.namespace, body })
    } catch (err) {
      if (apiStatus(err) !== 404) throw err
      await this.core.createNamespacedSecret({ namespace: this.namespace, body })
    }
    return { id, signingSecret, source: 'key' }
  }

  /** The secret callbacks of this key are signed with now. */
  async revealSecret(id: string): Promise<RevealedSecret> {
    const apiKey = await this.get(id)
    const own = await this.readSecret(apiKey.spec.signingSecretName || signingSecretNameFor(apiKey.metadata.name))
    if (own) return { id, signingSecret: own, source: 'key' }
    return { id, signingSecret: await this.ensureWorkspaceSecret(), source: 'workspace' }
  }

  /** The workspace signing secret, created when missing (keys without a secret of their own use it). */
  async ensureWorkspaceSecret(): Promise<string> {
    const existing = await this.readSecret(WORKSPACE_SIGNING_SECRET)
    if (existing) return existing
    const signingSecret = newSigningSecret()
    try {
      await this.core.createNamespacedSecret({
        namespace: this.namespace,
        body: { metadata: { name: WORKSPACE_SIGNING_SECRET, labels: { [LABELS.managedBy]: MANAGED_BY } }, type: 'Opaque', stringData: { [SIGNING_SECRET_KEY]: signingSecret } },
      })
      return signingSecret
    } catch (err) {
      if (apiStatus(err) !== 409) throw err
      return (await this.readSecret(WORKSPACE_SIGNING_SECRET))!
    }
  }

  /** Active keys first, then revoked ones, each newest first. */
  async list(): Promise<ApiKeyResource[]> {
    const res = (await this.custom.listNamespacedCustomObject(this.coords())) as { items: ApiKeyResource[] }
    return res.items.sort((a, b) => Number(!!a.spec.revokedAt) - Number(!!b.spec.revokedAt) || b.spec.createdAt.localeCompare(a.spec.createdAt))
  }

  async setRateLimit(id: string, rateLimitPerMinute: number): Promise<ApiKeyResource> {
    if (!ulidOf(id, 'key')) throw new Error(`${id} is not an API key id (key_...)`)
    return (await this.custom.patchNamespacedCustomObject(
      { ...this.coords(), name: objectNameOf(id), body: { spec: { rateLimitPerMinute } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as ApiKeyResource
  }

  /** Replaces the workspace signing secret (console playground runs and keys without their own). */
  async rotateWorkspaceSecret(): Promise<string> {
    const signingSecret = newSigningSecret()
    const body = { metadata: { name: WORKSPACE_SIGNING_SECRET, labels: { [LABELS.managedBy]: MANAGED_BY } }, type: 'Opaque', stringData: { [SIGNING_SECRET_KEY]: signingSecret } }
    try {
      await this.core.replaceNamespacedSecret({ name: WORKSPACE_SIGNING_SECRET, namespace: this.namespace, body })
    } catch (err) {
      if (apiStatus(err) !== 404) throw err
      await this.core.createNamespacedSecret({ namespace: this.namespace, body })
    }
    return signingSecret
  }

  async revoke(id: string, now = Date.now()): Promise<ApiKeyResource> {
    if (!ulidOf(id, 'key')) throw new Error(`${id} is not an API key id (key_...)`)
    return (await this.custom.patchNamespacedCustomObject(
      { ...this.coords(), name: objectNameOf(id), body: { spec: { revokedAt: isoMs(now) } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as ApiKeyResource
  }
}
