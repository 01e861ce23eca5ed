import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { guarded, type Database } from '../contract/db/database.js'
import { usageRows, type UsageRow } from '../contract/db/usage-table.js'
import type { JobRecord } from '../contract/db/job-row.js'
import { failUnstarted, findIdempotent, getJob, insertAccepted, listJobs, type AcceptOutcome, type JobListQuery } from '../contract/db/jobs-table.js'
import { objectNameOf, ulidOf } from '../contract/ids.js'
import type { JobStore } from './job-store.js'

/**
 * The gateway's view of jobs from both sources (docs/adr/0010): a live job's UtilityJob (its
 * status subresource is the truth while it exists) and the job record in PostgreSQL (lists,
 * idempotency, and every job no longer in the cluster).
 */
export class JobRecords {
  constructor(
    readonly db: Database,
    private readonly store: JobStore,
    private readonly limits: { maxQueuedPerKey?: number; maxQueuedTotal?: number } = {},
  ) {}

  /**
   * Writes the accepted job's row (with its Idempotency-Key) before the UtilityJob exists; an
   * async job is refused (over_ceiling) when its API key, or the whole platform, already has its
   * most queued jobs.
   */
  accept(uj: UtilityJobResource): Promise<AcceptOutcome> {
    const maxQueuedPerKey = uj.spec.apiKeyId ? this.limits.maxQueuedPerKey : undefined
    return guarded(() => insertAccepted(this.db, uj, { maxQueuedPerKey, maxQueuedTotal: this.limits.maxQueuedTotal }))
  }

  /** Records that the job could not be handed to the cluster, so it never stays queued. */
  failUnstarted(uj: UtilityJobResource): Promise<void> {
    return guarded(() => failUnstarted(this.db, uj, { code: 'internal', message: 'The job could not be started.' }, Date.now()))
  }

  /**
   * A job by public id: its UtilityJob as the watch has it, else its row (no API round trip:
   * the row is written before the UtilityJob and before every status, so it is never older than
   * what the API server would say); undefined when neither exists.
   */
  async find(id: string): Promise<JobRecord | UtilityJobResource | undefined> {
    if (!ulidOf(id, 'job')) return undefined
    const cached = this.store.cached(objectNameOf(id))
    if (cached && cached.spec.jobId === id) return cached
    return guarded(() => getJob(this.db, id))
  }

  /** The live UtilityJob of a job (the watch's copy, else a read of the API server). */
  async live(id: string): Promise<UtilityJobResource | undefined> {
    if (!ulidOf(id, 'job')) return undefined
    const uj = await this.store.get(objectNameOf(id))
    return uj && uj.spec.jobId === id ? uj : undefined
  }

  /** The job an API key's Idempotency-Key created, as it is now. */
  async findIdempotent(apiKeyId: string, keyHash: string): Promise<JobRecord | UtilityJobResource | undefined> {
    const id = await guarded(() => findIdempotent(this.db, apiKeyId, keyHash))
    return id ? this.find(id) : undefined
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
  return { apiVersion: 'dutil.io/v1alpha1', kind: 'UtilityJob', metadata: { name: objectNameOf(job.spec.jobId) }, spec: job.spec, status: job.status }
}
