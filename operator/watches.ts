import {
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node'
import type { Logger } from 'pino'
import { API_GROUP, API_VERSION, LABELS, MANAGED_BY, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { watchedCache, type WatchedCache } from '../platform/kube.js'

export interface OperatorCaches {
  utilityJobs: WatchedCache<UtilityJobResource>
  /** The batch Jobs the operator made (its managed-by label), and their pods. */
  jobs: WatchedCache<V1Job>
  pods: WatchedCache<V1Pod>
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
  }
}

/** The UtilityJob (its object name) a batch Job or runner pod belongs to, from its label. */
export function ownerOf(obj: V1Job | V1Pod): string | undefined {
  return obj.metadata?.labels?.[LABELS.jobId]
}
