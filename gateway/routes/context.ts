import type { InputSealingKey } from '../../platform/input-sealing-key.js'
import type { Client } from 'minio'
import type { Logger } from 'pino'
import type { FileLinks } from '../file-links.js'
import type { JobRecords } from '../job-records.js'
import type { JobReader } from '../job-reader.js'
import type { JobWaiters } from '../job-waiters.js'
import type { UtilityJobClient } from '../../platform/utility-job-client.js'
import type { GatewayMetrics } from '../metrics.js'
import type { Uploads } from '../uploads.js'
import type { DirectUploads } from '../direct-uploads.js'

/** Everything route handlers need, built once in main.ts (or by a test). */
export interface RouteDeps {
  /** UtilityJobs on the API server: create, patch. */
  jobs: UtilityJobClient
  /** One job as it is now (the job record first). */
  reader: JobReader
  /** Waits for a job to change, woken by the watch. */
  waiters: JobWaiters
  links: FileLinks
  /** The job record (PostgreSQL): accepting, lists, idempotency. */
  records: JobRecords
  storage: Client
  bucket: string
  /** Files API keys upload for their own jobs (POST /v1/files). */
  uploads: Uploads
  /** Large files sent straight to storage by presigned requests (POST /v1/files?size=). */
  directUploads: DirectUploads
  /** The installation's key that passwords in a job's input are sealed with (docs/adr/0042). */
  sealing: InputSealingKey
  log: Logger
  metrics: GatewayMetrics
  /** Sync runs answer 202 after this long (docs/api.md: 90 s). */
  syncWaitMs: number
  /** Accept test-only request headers (shorter time limits). Never on in production. */
  testHooks: boolean
  /** Aborted when the gateway shuts down: waits end early and answer with the job as it is. */
  shutdown: AbortSignal
}
