import { UtilityJobClient } from '../platform/utility-job-client.js'
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import type { Database } from '../platform/db/database.js'
import { appendCallbackAttempt, getJob } from '../platform/db/jobs-table.js'
import { FileLinks } from '../platform/file-links.js'
import { storageClient } from '../platform/storage-client.js'
import { CallbackController } from './callbacks/controller.js'
import { deliverCallback } from './callbacks/delivery.js'
import { scaledSchedule } from './callbacks/schedule.js'
import { KubeSigningSecrets } from './callbacks/signing-secrets.js'
import type { OperatorConfig } from './config.js'
import type { OperatorCaches } from './watches.js'
import type { EventRecorder } from './events.js'
import type { OperatorMetrics } from './metrics.js'
import type { JobRecordWriter } from './reconciler.js'
import { keyRevoked } from './signing-secret-sweep.js'

export interface CallbackWiring {
  kc: KubeConfig
  config: OperatorConfig
  caches: Pick<OperatorCaches, 'utilityJobs'>
  db: Database
  records: JobRecordWriter
  events: EventRecorder
  metrics: OperatorMetrics
  log: Logger
}

/**
 * The callback controller, wired: signed deliveries to the client's URL with back-off, file
 * links signed for the storage endpoint clients reach, each attempt in the job record.
 */
export function callbackController(d: CallbackWiring): CallbackController {
  const { config } = d
  const ns = config.namespace
  const custom = d.kc.makeApiClient(CustomObjectsApi)
  const schedule = scaledSchedule(config.callbacks.delayScale)
  const fileLinks = new FileLinks(
    storageClient({ ...config.storage, endpoint: config.callbacks.publicStorageEndpoint }),
    config.storage.bucket,
    config.callbacks.linkTtlSeconds,
    (id) => getJob(d.db, id),
  )
  return new CallbackController({
    events: d.events,
    namespace: ns,
    utilityJobs: d.caches.utilityJobs.cache,
    api: new UtilityJobClient(custom, ns),
    secrets: new KubeSigningSecrets(d.kc.makeApiClient(CoreV1Api), ns, config.callbacks.signingSecretsName, (id) =>
      keyRevoked(custom, ns, id),
    ),
    view: (uj) => fileLinks.view(uj),
    send: (msg) => deliverCallback(msg, { ...config.callbacks.destinations, timeoutMs: schedule.timeoutMs }),
    schedule,
    record: d.records.callback,
    recordAttempt: (jobId, entry) => appendCallbackAttempt(d.db, jobId, entry),
    log: d.log.child({ controller: 'callbacks' }),
    metrics: d.metrics,
  })
}
