import { UtilityJobClient } from '../platform/utility-job-client.js'
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node'
import type { Client } from 'minio'
import type { Logger } from 'pino'
import type { Database } from '../platform/db/database.js'
import { catalog } from '../runners/catalog.js'
import type { OperatorConfig } from './config.js'
import type { OperatorCaches } from './watches.js'
import { JobRecordUpkeep } from './job-record-upkeep.js'
import type { OperatorMetrics } from './metrics.js'
import { UploadSweeper } from './upload-sweep.js'
import { RetentionSweeper } from './retention.js'
import { SigningSecretSweeper } from './signing-secret-sweep.js'

export interface SweepWiring {
  kc: KubeConfig
  config: OperatorConfig
  caches: Pick<OperatorCaches, 'utilityJobs'>
  storage: Client
  db: Database
  metrics: OperatorMetrics
  log: Logger
}

/**
 * The leader's periodic sweeps, on the same jobs, files and retention, counting into the same
 * metrics: retention, the job record's upkeep (also used at start, and for hand-offs lost), and
 * the signing secrets of keys long gone.
 */
export function operatorSweeps(d: SweepWiring) {
  const { config } = d
  const common = {
    namespace: config.namespace,
    utilityJobs: d.caches.utilityJobs.cache,
    api: new UtilityJobClient(d.kc.makeApiClient(CustomObjectsApi), config.namespace),
    storage: d.storage,
    bucket: config.storage.bucket,
    retentionMs: config.retention.retentionMs,
    utilities: [...catalog.keys()],
    metrics: { deletedJobs: d.metrics.retentionDeletedJobs, deletedObjects: d.metrics.retentionDeletedObjects },
  }
  const retention = new RetentionSweeper({ ...common, log: d.log.child({ controller: 'retention' }) })
  const upkeep = new JobRecordUpkeep({
    ...common,
    db: d.db,
    queuedCountsDrift: d.metrics.queuedCountsDrift,
    log: d.log.child({ controller: 'job-record' }),
  })
  const signingSweep = new SigningSecretSweeper({
    kc: d.kc,
    namespace: config.namespace,
    secretName: config.callbacks.signingSecretsName,
    utilityJobs: d.caches.utilityJobs.cache,
    retentionMs: config.retention.retentionMs,
    log: d.log.child({ controller: 'signing-secrets' }),
  })
  const uploads = new UploadSweeper({
    db: d.db,
    storage: d.storage,
    bucket: config.storage.bucket,
    log: d.log.child({ controller: 'uploads' }),
  })
  return {
    upkeep,
    sweeps: [
      { name: 'upload sweep', sweep: () => uploads.sweep() },
      { name: 'retention sweep', sweep: () => retention.sweep() },
      { name: 'job record upkeep', sweep: () => upkeep.sweep() },
      { name: 'signing secret sweep', sweep: () => signingSweep.sweep() },
    ],
  }
}
