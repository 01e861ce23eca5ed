import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { guarded, type Database } from '../platform/db/database.js'
import { usageRows, type UsageRow } from '../platform/db/usage-table.js'
import type { JobRecord } from '../platform/db/job-row.js'
import {
  failUnstarted,
  findIdempotent,
  getCallbackLog,
  getJob,
  insertAccepted,
  listJobs,
  type AcceptOutcome,
  type JobListQuery,
} from '../platform/db/jobs-table.js'
import type { CallbackAttemptEntry } from '../contract/crd-schemas.js'
import { objectNameOf, ulidOf } from '../contract/ids.js'

/**
 * The gateway's view of jobs from both sources (docs/adr/0010): a live job's UtilityJob (its
 * status subresource is the truth while it exists) and the job record in PostgreSQL (lists,
 * idempotency, and every job no longer in the cluster).
 */
export class JobRecords {
  constructor(
    readonly db: Database,
    private readonly limits: { maxQueuedPerKey?: number; maxQueuedTotal?: number } = {},
    /** The UtilityJob of a name from the API server (for jobs the record does not hold yet). */
    private readonly readLive: (name: string) => Promise<UtilityJobResource | undefined> = async () => undefined,
  ) {}

  /**
   * Writes the accepted job's row (with its Idempotency-Key) before the UtilityJob exists; a job
   * is refused (over_ceiling) when its API key, or the whole platform, already has its most
   * queued jobs. `beforeCommit` runs once the job is sure to be accepted (insertAccepted).
   */
  accept(uj: UtilityJobResource, beforeCommit?: () => Promise<void>): Promise<AcceptOutcome> {
    const maxQueuedPerKey = uj.spec.apiKeyId ? this.limits.maxQueuedPerKey : undefined
    return guarded(() =>
      insertAccepted(this.db, uj, { maxQueuedPerKey, maxQueuedTotal: this.limits.maxQueuedTotal, beforeCommit }),
    )
  }

  /** Records that the job could not be handed to the cluster, so it never stays queued. */
  failUnstarted(uj: UtilityJobResource): Promise<void> {
    return guarded(() =>
      failUnstarted(this.db, uj, { code: 'internal', message: 'The job could not be started.' }, Date.now()),
    )
  }

  /**
   * A job by public id, from its row: the row is written before the UtilityJob and before every
   * status, so it is never older than what the API server would say (the gateway keeps no copy
   * of live UtilityJobs: its memory does not grow with the number of unfinished jobs, ADR 0014).
   * A UtilityJob made outside the gateway (kubectl) has no row until the operator's first pass:
   * that one is read from the API server.
   */
  async find(id: string): Promise<JobRecord | UtilityJobResource | undefined> {
    if (!ulidOf(id, 'job')) return undefined
    const row = await guarded(() => getJob(this.db, id))
    if (row) return row
    const live = await this.readLive(objectNameOf(id))
    return live?.spec.jobId === id ? live : undefined
  }

  /** The job as it is now, as the UtilityJob it stands for (what waiters compare). */
  async current(id: string): Promise<UtilityJobResource | undefined> {
    const row = await this.find(id)
    return row && asResource(row)
  }

  /** The job an API key's Idempotency-Key created, as it is now. */
  async findIdempotent(apiKeyId: string, keyHash: string): Promise<JobRecord | UtilityJobResource | undefined> {
    const id = await guarded(() => findIdempotent(this.db, apiKeyId, keyHash))
    return id ? this.find(id) : undefined
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

/** A record as the UtilityJob it stands for (the name the cluster knows it by), for waiting on it. */
export function asResource(job: JobRecord | UtilityJobResource): UtilityJobResource {
  if ('metadata' in job) return job as UtilityJobResource
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: objectNameOf(job.spec.jobId) },
    spec: job.spec,
    status: job.status,
  }
}
