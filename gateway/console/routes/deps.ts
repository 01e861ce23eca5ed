import type { InputSealingKey } from '../../../platform/input-sealing-key.js'
import type { Client } from 'minio'
import type { Logger } from 'pino'
import type { ApiKeyResource } from '../../../contract/crd-schemas.js'
import type { ApiKeyAdmin } from '../../../platform/api-key-admin.js'
import type { FileLinks } from '../../file-links.js'
import type { JobRecords } from '../../job-records.js'
import type { JobReader } from '../../job-reader.js'
import type { UtilityJobClient } from '../../../platform/utility-job-client.js'
import type { GatewayMetrics } from '../../metrics.js'
import type { ConsoleConfig } from '../config.js'
import type { Lockout } from '../lockout.js'
import type { RedisMutex } from '../redis-mutex.js'
import type { RateLimiter } from '../../rate-limit.js'
import type { OidcRelyingParty } from '../oidc.js'
import type { PeopleStore } from '../../../platform/people-store.js'
import type { SessionStore } from '../sessions.js'
import type { Uploads } from '../../uploads.js'

/** Everything console routes need, built once by createConsole (or by a test). */
export interface ConsoleDeps {
  config: ConsoleConfig
  people: PeopleStore
  sessions: SessionStore
  lockout: Lockout
  /** Serialises changes checked against other objects (the last-admin rule, key caps). */
  mutex: RedisMutex
  /** Fixed-window counters in Redis: playground runs per person, keys made per person and day, requests before sign-in per address. */
  counters: RateLimiter
  keyAdmin: ApiKeyAdmin
  /** ApiKeys as the gateway's watch sees them. */
  keyList: () => readonly ApiKeyResource[]
  /** UtilityJobs on the API server (the playground's creates, redelivery requests). */
  jobs: UtilityJobClient
  /** One job as it is now (the job record first). */
  reader: JobReader
  /** The job record: job lists, archived jobs, usage. */
  records: JobRecords
  metrics: GatewayMetrics
  links: FileLinks
  storage: Client
  bucket: string
  /** Files the playground's form sends, uploads of the person (playgroundUploadOwner). */
  uploads: Uploads
  /** The key passwords in playground runs are sealed with. */
  sealing: InputSealingKey
  oidc: OidcRelyingParty | null
  log: Logger
}
