import { CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node'
import { API_GROUP, API_GROUP_VERSION, API_KEY, API_VERSION, LABELS, MANAGED_BY } from '../contract/api-group.js'
import {
  DEFAULT_RATE_LIMIT,
  hashApiKey,
  hashLabel,
  keyPrefix,
  newApiKeyValue,
  newSigningSecret,
  PLAYGROUND_SIGNING_ENTRY,
  WORKSPACE_SIGNING_ENTRY,
} from '../contract/api-keys.js'
import { SECRET_OBJECTS, SecretEntries } from './secret-entries.js'
import type { ApiKeyResource } from '../contract/crd-schemas.js'
import { newId, objectNameOf, ulidOf } from '../contract/ids.js'
import { isoMs } from '../contract/time.js'

export interface CreateKeyOptions {
  name: string
  utilities: string[]
  rateLimitPerMinute?: number
  expiresInDays?: number
  /** The console user creating the key (keys made with the CLI have none). */
  createdBy?: { userId: string; email: string }
  /** Whom the key's jobs count against (contract/owners.ts); default: its creator, else itself. */
  owner?: string
}

export interface CreatedKey {
  id: string
  key: string
  signingSecret: string
}

/** A key's effective signing secret: its own, or the workspace's for a key that has none yet. */
export interface RevealedSecret {
  id: string
  signingSecret: string
  source: 'key' | 'workspace'
}

/** API key management against ApiKey resources and their signing-secret Secrets. */
export class ApiKeyAdmin {
  private readonly custom: CustomObjectsApi
  private readonly signing: SecretEntries

  constructor(
    kc: KubeConfig,
    private readonly namespace: string,
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi)
    this.signing = new SecretEntries(kc.makeApiClient(CoreV1Api), namespace, SECRET_OBJECTS.signing)
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
        signingSecretName: SECRET_OBJECTS.signing,
        ...(opts.createdBy ? { createdBy: opts.createdBy } : {}),
        ...(opts.owner ? { owner: opts.owner } : {}),
      },
    }
    // The signing secret first: a key never exists, even for a moment or after a crash, without
    // its own secret (its callbacks would be signed with the workspace secret). A crash after it
    // leaves only an unused entry that names no key.
    await this.signing.write({ [name]: signingSecret })
    await this.custom.createNamespacedCustomObject({ ...this.coords(), body })
    return { id, key, signingSecret }
  }

  private async get(id: string): Promise<ApiKeyResource> {
    if (!ulidOf(id, 'key')) throw new Error(`${id} is not an API key id (key_...)`)
    return (await this.custom.getNamespacedCustomObject({ ...this.coords(), name: objectNameOf(id) })) as ApiKeyResource
  }

  /**
   * Gives the key a new signing secret of its own (a key that used the workspace secret gets
   * one). The callback controller reads the Secret at every attempt, so the next attempt of
   * every pending callback is signed with the new secret.
   */
  async rotateSecret(id: string): Promise<RevealedSecret> {
    const apiKey = await this.get(id)
    if (apiKey.spec.revokedAt) throw new RevokedKeyError(id)
    const signingSecret = newSigningSecret()
    await this.signing.write({ [apiKey.metadata.name]: signingSecret })
    return { id, signingSecret, source: 'key' }
  }

  /**
   * The secret callbacks of this key are signed with now. A revoked key whose entry was removed
   * (its last callback settled) has none: never the workspace secret in its place.
   */
  async revealSecret(id: string): Promise<RevealedSecret> {
    const apiKey = await this.get(id)
    const entries = await this.signing.all()
    const own = entries[apiKey.metadata.name]
    if (own) return { id, signingSecret: own, source: 'key' }
    if (apiKey.spec.revokedAt) throw new RevokedKeyError(id)
    return { id, signingSecret: await this.ensureWorkspaceSecret(), source: 'workspace' }
  }

  /** The workspace signing secret, made when missing (keys without a secret of their own use it). */
  ensureWorkspaceSecret(): Promise<string> {
    return this.signing.setIfAbsent(WORKSPACE_SIGNING_ENTRY, newSigningSecret())
  }

  /** The playground signing secret, made when missing (console playground callbacks). */
  ensurePlaygroundSecret(): Promise<string> {
    return this.signing.setIfAbsent(PLAYGROUND_SIGNING_ENTRY, newSigningSecret())
  }

  /** Replaces the playground signing secret. */
  async rotatePlaygroundSecret(): Promise<string> {
    const signingSecret = newSigningSecret()
    await this.signing.write({ [PLAYGROUND_SIGNING_ENTRY]: signingSecret })
    return signingSecret
  }

  /** Active keys first, then revoked ones, each newest first. */
  async list(): Promise<ApiKeyResource[]> {
    const res = (await this.custom.listNamespacedCustomObject(this.coords())) as { items: ApiKeyResource[] }
    return res.items.sort(
      (a, b) =>
        Number(!!a.spec.revokedAt) - Number(!!b.spec.revokedAt) || b.spec.createdAt.localeCompare(a.spec.createdAt),
    )
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
    await this.signing.write({ [WORKSPACE_SIGNING_ENTRY]: signingSecret })
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

/** A revoked key has no signing secret to reveal or rotate. */
export class RevokedKeyError extends Error {
  constructor(readonly keyId: string) {
    super(`${keyId} is revoked: it has no signing secret any more`)
    this.name = 'RevokedKeyError'
  }
}
