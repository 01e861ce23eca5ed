import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { objectNameOf, ulidOf } from '../contract/ids.js'
import { guarded, type Database } from '../platform/db/database.js'
import type { JobRecord } from '../platform/db/job-row.js'
import { getJob } from '../platform/db/jobs-table.js'
import type { UtilityJobClient } from '../platform/utility-job-client.js'

/**
 * The one way the gateway reads a job (docs/adr/0010): its row in the job record first, which is
 * written before the UtilityJob and before every status, so it is never older than what the API
 * server would say; the API server only for what the record does not hold yet (a UtilityJob made
 * with kubectl has no row until the operator's first pass). Nothing is cached: the gateway's
 * memory does not grow with the number of unfinished jobs (docs/adr/0014).
 */
export class JobReader {
  constructor(
    private readonly db: Database,
    private readonly live: Pick<UtilityJobClient, 'get'>,
  ) {}

  /** A job by public id, as its row or (not recorded yet) its UtilityJob. */
  async find(id: string): Promise<JobRecord | UtilityJobResource | undefined> {
    if (!ulidOf(id, 'job')) return undefined
    const row = await guarded(() => getJob(this.db, id))
    if (row) return row
    const live = await this.live.get(objectNameOf(id))
    return live?.spec.jobId === id ? live : undefined
  }

  /** The job as it is now, as the UtilityJob it stands for (what waiters compare). */
  async current(id: string): Promise<UtilityJobResource | undefined> {
    const job = await this.find(id)
    return job && asResource(job)
  }
}

/** A record as the UtilityJob it stands for (the name the cluster knows it by), for waiting on it. */
export function asResource(job: JobRecord | UtilityJobResource): UtilityJobResource {
  // A record from the job's row has no name, and metadata only for the annotations it keeps.
  if ((job as UtilityJobResource).metadata?.name) return job as UtilityJobResource
  const annotations = job.metadata?.annotations
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: objectNameOf(job.spec.jobId), ...(annotations ? { annotations } : {}) },
    spec: job.spec,
    status: job.status,
  }
}
