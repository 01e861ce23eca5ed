import type { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import { API_GROUP, API_KEY, API_VERSION, UTILITY_JOB } from '../contract/api-group.js'
import type { ApiKeyResource, UtilityJobResource } from '../contract/crd-schemas.js'
import { watchedCache, watchEvents, type EventWatch, type WatchedCache } from '../platform/kube.js'
import type { JobWaiters } from './job-waiters.js'

const path = (ns: string, plural: string) => `/apis/${API_GROUP}/${API_VERSION}/namespaces/${ns}/${plural}`
const coords = (ns: string, plural: string) => ({ group: API_GROUP, version: API_VERSION, namespace: ns, plural })

/** UtilityJob changes handed to the waiters; nothing of the jobs is kept. */
export function watchJobChanges(
  kc: KubeConfig,
  custom: CustomObjectsApi,
  ns: string,
  log: Logger,
  waiters: JobWaiters,
): EventWatch {
  return watchEvents<UtilityJobResource>(
    kc,
    path(ns, UTILITY_JOB.plural),
    (limit) => custom.listNamespacedCustomObject({ ...coords(ns, UTILITY_JOB.plural), limit }),
    log,
    { onEvent: (_ev, job) => waiters.observe(job), onResync: () => waiters.resync() },
  )
}

/** Every ApiKey of the namespace, cached (authentication looks keys up by hash in it). */
export function watchApiKeys(
  kc: KubeConfig,
  custom: CustomObjectsApi,
  ns: string,
  log: Logger,
): WatchedCache<ApiKeyResource> {
  return watchedCache<ApiKeyResource>(
    kc,
    path(ns, API_KEY.plural),
    () => custom.listNamespacedCustomObject(coords(ns, API_KEY.plural)),
    log,
  )
}
