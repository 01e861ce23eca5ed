import type { Client } from 'minio'
import type { Logger } from 'pino'
import type { FileLinks } from '../file-links.js'
import type { JobRecords } from '../job-records.js'
import type { JobStore } from '../job-store.js'
import type { GatewayMetrics } from '../metrics.js'

/** Everything route handlers need, built once in main.ts (or by a test). */
export interface RouteDeps {
  store: JobStore
  links: FileLinks
  /** The job record (PostgreSQL): lists, idempotency, jobs no longer in the cluster. */
  records: JobRecords
  storage: Client
  bucket: string
  log: Logger
  metrics: GatewayMetrics
  /** Sync runs answer 202 after this long (docs/api.md: 90 s). */
  syncWaitMs: number
  /** Accept test-only request headers (shorter time limits). Never on in production. */
  testHooks: boolean
  /** Aborted when the gateway shuts down: waits end early and answer with the job as it is. */
  shutdown: AbortSignal
}
