import { CoreV1Api, CustomObjectsApi, type KubeConfig, type ObjectCache } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import { API_GROUP, API_KEY, API_VERSION } from '../contract/api-group.js'
import type { ApiKeyResource, UtilityJobResource } from '../contract/crd-schemas.js'
import { objectNameOf } from '../contract/ids.js'
import { isTerminal } from '../contract/job-view.js'
import { apiStatus } from '../platform/kube.js'
import { SecretEntries } from '../platform/secret-entries.js'
import { CallbackController } from './callbacks/controller.js'

/**
 * The signing-Secret entries that may go (pure): those of revoked ApiKeys none of whose jobs in
 * the cluster is unfinished or still has a callback to deliver. Entries of active keys, of the
 * workspace and the playground, and entries that name no ApiKey (a key being made writes its
 * entry first) stay.
 */
export function entriesToRemove(
  entryNames: readonly string[],
  keys: readonly ApiKeyResource[],
  jobs: readonly UtilityJobResource[],
): string[] {
  const revoked = new Map(keys.filter((k) => k.spec.revokedAt).map((k) => [k.metadata.name, k.spec.keyId]))
  const busy = new Set(jobs.filter((j) => !isTerminal(j) || CallbackController.wants(j)).map((j) => j.spec.apiKeyId))
  return entryNames.filter((name) => revoked.has(name) && !busy.has(revoked.get(name)!))
}

/**
 * The revoked ApiKeys whose objects may go (pure): revoked longer ago than the retention (every
 * job they started has expired with it), their signing entry already removed (an entry naming
 * no ApiKey would stay for good), and none of their jobs in the cluster unfinished or owing a
 * callback.
 */
export function keysToDelete(
  keys: readonly ApiKeyResource[],
  entriesLeft: ReadonlySet<string>,
  jobs: readonly UtilityJobResource[],
  now: number,
  retentionMs: number,
): string[] {
  const busy = new Set(jobs.filter((j) => !isTerminal(j) || CallbackController.wants(j)).map((j) => j.spec.apiKeyId))
  return keys
    .filter((k) => {
      const revokedAt = k.spec.revokedAt ? Date.parse(k.spec.revokedAt) : NaN
      return (
        Number.isFinite(revokedAt) &&
        revokedAt + retentionMs <= now &&
        !entriesLeft.has(k.metadata.name) &&
        !busy.has(k.spec.keyId)
      )
    })
    .map((k) => k.metadata.name)
}

export interface SigningSecretSweepDeps {
  kc: KubeConfig
  namespace: string
  /** The Secret with the signing entries (dutil-signing-secrets). */
  secretName: string
  utilityJobs: ObjectCache<UtilityJobResource>
  /** How long a revoked key's object stays (the jobs' retention). */
  retentionMs: number
  now?: () => number
  log: Logger
}

/**
 * Leader-only upkeep of revoked keys: each key adds an entry to the signing Secret, and a revoked
 * key's entry is removed once its last callback has settled, so key churn cannot fill the Secret
 * (1 MiB) and every callback attempt reads a Secret the size of the active keys. The ApiKey
 * object itself goes once the retention has passed since it was revoked, so churned keys do not
 * pile up in etcd.
 */
export class SigningSecretSweeper {
  private readonly custom: CustomObjectsApi
  private readonly entries: SecretEntries

  constructor(private readonly d: SigningSecretSweepDeps) {
    this.custom = d.kc.makeApiClient(CustomObjectsApi)
    this.entries = new SecretEntries(d.kc.makeApiClient(CoreV1Api), d.namespace, d.secretName)
  }

  async sweep(): Promise<number> {
    const [all, keys] = await Promise.all([
      this.entries.all(),
      this.custom.listNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: this.d.namespace,
        plural: API_KEY.plural,
      }) as Promise<{ items: ApiKeyResource[] }>,
    ])
    const jobs = this.d.utilityJobs.list(this.d.namespace)
    const gone = entriesToRemove(Object.keys(all), keys.items, jobs)
    if (gone.length > 0) {
      await this.entries.write(Object.fromEntries(gone.map((name) => [name, null])))
      this.d.log.info(
        { removed: gone.length, kept: Object.keys(all).length - gone.length },
        'signing secrets of revoked keys removed',
      )
    }
    const left = new Set(Object.keys(all).filter((name) => !gone.includes(name)))
    const expired = keysToDelete(keys.items, left, jobs, this.d.now?.() ?? Date.now(), this.d.retentionMs)
    for (const name of expired) {
      try {
        await this.custom.deleteNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          namespace: this.d.namespace,
          plural: API_KEY.plural,
          name,
        })
      } catch (err) {
        if (apiStatus(err) !== 404) throw err
      }
    }
    if (expired.length) this.d.log.info({ deleted: expired.length }, 'revoked keys past their retention deleted')
    return gone.length + expired.length
  }
}

/** Whether an API key is revoked (a key that no longer exists counts as revoked). */
export async function keyRevoked(custom: CustomObjectsApi, namespace: string, apiKeyId: string): Promise<boolean> {
  try {
    const key = (await custom.getNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace,
      plural: API_KEY.plural,
      name: objectNameOf(apiKeyId),
    })) as ApiKeyResource
    return Boolean(key.spec.revokedAt)
  } catch (err) {
    if (apiStatus(err) === 404) return true
    throw err
  }
}
