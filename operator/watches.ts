import {
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node'
import type { Logger } from 'pino'
import { API_GROUP, API_KEY, API_VERSION, LABELS, MANAGED_BY, UTILITY_JOB } from '../contract/api-group.js'
import type { ApiKeyResource, UtilityJobResource } from '../contract/crd-schemas.js'
import { watchedCache, type WatchedCache } from '../platform/kube.js'

export interface OperatorCaches {
  utilityJobs: WatchedCache<UtilityJobResource>
  /** The batch Jobs the operator made (its managed-by label), and their pods. */
  jobs: WatchedCache<V1Job>
  pods: WatchedCache<V1Pod>
  /** API keys: a revoked key's queued jobs are cancelled, its object removed after retention. */
  apiKeys: WatchedCache<ApiKeyResource>
}

/** The caches the reconcilers read: every UtilityJob of the namespace, and what the operator owns. */
export function watchOperatorCaches(kc: KubeConfig, ns: string, log: Logger): OperatorCaches {
  const custom = kc.makeApiClient(CustomObjectsApi)
  const batch = kc.makeApiClient(BatchV1Api)
  const core = kc.makeApiClient(CoreV1Api)
  const managed = `${LABELS.managedBy}=${MANAGED_BY}`
  return {
    utilityJobs: watchedCache<UtilityJobResource>(
      kc,
      `/apis/${API_GROUP}/${API_VERSION}/namespaces/${ns}/${UTILITY_JOB.plural}`,
      () =>
        custom.listNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          namespace: ns,
          plural: UTILITY_JOB.plural,
        }),
      log,
    ),
    jobs: watchedCache<V1Job>(
      kc,
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      () => batch.listNamespacedJob({ namespace: ns, labelSelector: managed }),
      log,
      undefined,
      managed,
    ),
    pods: watchedCache<V1Pod>(
      kc,
      `/api/v1/namespaces/${ns}/pods`,
      () => core.listNamespacedPod({ namespace: ns, labelSelector: managed }),
      log,
      undefined,
      managed,
    ),
    apiKeys: watchedCache<ApiKeyResource>(
      kc,
      `/apis/${API_GROUP}/${API_VERSION}/namespaces/${ns}/${API_KEY.plural}`,
      () =>
        custom.listNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          namespace: ns,
          plural: API_KEY.plural,
        }),
      log,
    ),
  }
}

/** The UtilityJob (its object name) a batch Job or runner pod belongs to, from its label. */
export function ownerOf(obj: V1Job | V1Pod): string | undefined {
  return obj.metadata?.labels?.[LABELS.jobId]
}

/**
 * The names of the pods each UtilityJob owns (its job label), kept from the pod watch's events:
 * a reconcile pass looks up its job's pods without going through every pod the watch holds
 * (finished runner pods stay until their Job's TTL).
 */
export class PodsByOwner {
  private readonly byOwner = new Map<string, Set<string>>()

  /** One event of the pod watch. */
  apply(event: 'add' | 'update' | 'delete', pod: V1Pod): void {
    const owner = ownerOf(pod)
    const name = pod.metadata?.name
    if (!owner || !name) return
    const names = this.byOwner.get(owner) ?? new Set<string>()
    if (event === 'delete') names.delete(name)
    else names.add(name)
    if (names.size) this.byOwner.set(owner, names)
    else this.byOwner.delete(owner)
  }

  /** The pods of UtilityJob `owner`, as the cache has them now. */
  of(owner: string, cache: { get(name: string, namespace?: string): V1Pod | undefined }, ns: string): V1Pod[] {
    const out: V1Pod[] = []
    for (const name of this.byOwner.get(owner) ?? []) {
      const pod = cache.get(name, ns)
      if (pod && ownerOf(pod) === owner) out.push(pod)
    }
    return out
  }
}
