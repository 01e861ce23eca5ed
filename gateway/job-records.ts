import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { guarded, type Database } from '../platform/db/database.js'
import { usageRows, type UsageRow } from '../platform/db/usage-table.js'
import type { JobRecord } from '../platform/db/job-row.js'
import {
  failUnstarted,
  findIdempotent,
  getCallbackLog,
  insertAccepted,
  listJobs,
  type AcceptOutcome,
  type JobListQuery,
  type QueuedCeilings,
} from '../platform/db/jobs-table.js'
import type { CallbackAttemptEntry } from '../contract/crd-schemas.js'
import type { JobReader } from './job-reader.js'

/**
 * The job record (PostgreSQL) as the gateway writes and lists it: accepting a job, lists,
 * idempotency, callback logs and usage. A single job is read through the JobReader.
 */
export class JobRecords {
  constructor(
    readonly db: Database,
    private readonly reader: Pick<JobReader, 'find'>,
    private readonly limits: QueuedCeilings = {},
  ) {}

  /**
   * Writes the accepted job's row (with its Idempotency-Key) before the UtilityJob exists; a job
   * is refused (over_ceiling) when its API key, its owner or the whole platform already has its
   * most queued jobs. `beforeCommit` runs once the job is sure to be accepted (insertAccepted).
   */
  accept(uj: UtilityJobResource, beforeCommit?: () => Promise<void>): Promise<AcceptOutcome> {
    return guarded(() => insertAccepted(this.db, uj, { ...this.limits, beforeCommit }))
  }

  /** Records that the job could not be handed to the cluster, so it never stays queued. */
  failUnstarted(uj: UtilityJobResource): Promise<void> {
    return guarded(() =>
      failUnstarted(this.db, uj, { code: 'internal', message: 'The job could not be started.' }, Date.now()),
    )
  }

  /** The job an API key's Idempotency-Key created, as it is now. */
  async findIdempotent(apiKeyId: string, keyHash: string): Promise<JobRecord | UtilityJobResource | undefined> {
    const id = await guarded(() => findIdempotent(this.db, apiKeyId, keyHash))
    return id ? this.reader.find(id) : undefined
  }

  /** A job's callback delivery log, oldest attempt first. */
  callbackLog(id: string): Promise<CallbackAttemptEntry[]> {
    return guarded(() => getCallbackLog(this.db, id))
  }

  list(q: JobListQuery): Promise<JobRecord[]> {
    return guarded(() => listJobs(this.db, q))
  }

  /** Usage of the days in [fromDay, toDay] (the console's usage page). */
  usage(fromDay: string, toDay: string): Promise<UsageRow[]> {
    return guarded(() => usageRows(this.db, fromDay, toDay))
  }
}
