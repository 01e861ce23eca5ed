import type { UtilityJobClient } from '../platform/utility-job-client.js'
import type { Database } from '../platform/db/database.js'
import {
  expireIdempotencyKeys,
  failUnstarted,
  getJob,
  openJobIdsCreatedBefore,
  storedKeysOfDay,
} from '../platform/db/jobs-table.js'
import { dropPartition, ensurePartitions, partitionDays } from '../platform/db/partitions.js'
import { recountQueued } from '../platform/db/queued-counts.js'
import { utcDay } from '../contract/time.js'
import { expireUsage, USAGE_RETENTION_DAYS } from '../platform/db/usage-table.js'
import { objectNameOf } from '../contract/ids.js'
import { removePrefix, type RetentionDeps } from './retention.js'

const DAY_MS = 86_400_000
/** Partitions made ahead of today, so that no accept ever waits on DDL. */
export const PARTITIONS_AHEAD_DAYS = 7
/** A row still open this long after its creation without a UtilityJob lost its hand-off. */
export const LOST_HANDOFF_MS = 120_000
/** Open rows read per page by the lost hand-off sweep. */
const OPEN_PAGE = 1000

/** What the retention sweep needs (the same jobs, files and retention), plus the database. */
export type UpkeepDeps = Omit<RetentionDeps, 'api'> & {
  db: Database
  api: Pick<UtilityJobClient, 'get'>
  /** Where a recount's drift goes (dutil_queued_counts_drift). */
  queuedCountsDrift?: { set(n: number): void }
}

/** The day partitions to drop: every whole day older than the retention. */
export function expiredPartitionDays(days: readonly string[], now: number, retentionMs: number): string[] {
  const keepFrom = utcDay(now - retentionMs)
  return days.filter((d) => d < keepFrom)
}

/**
 * Upkeep of the job record, run by the operator's leader: partitions made ahead, expired days
 * dropped whole (their files deleted from storage first, so a sweep that stops half-way finds
 * them again), idempotency keys and usage days expired, and rows whose UtilityJob never came
 * (a gateway that died between the two writes) failed, so that none stays queued forever.
 */
export class JobRecordUpkeep {
  constructor(private readonly d: UpkeepDeps) {}

  private now(): number {
    return this.d.now ? this.d.now() : Date.now()
  }

  async sweep(): Promise<{ days: number; jobs: number; objects: number }> {
    const now = this.now()
    await ensurePartitions(this.d.db, now - DAY_MS, PARTITIONS_AHEAD_DAYS + 2)
    let jobs = 0
    let objects = 0
    const expired = expiredPartitionDays(await partitionDays(this.d.db), now, this.d.retentionMs)
    for (const day of expired) {
      const stored = await storedKeysOfDay(this.d.db, day)
      for (const prefix of [
        ...this.d.utilities.map((u) => `${u}/${day}/`),
        ...stored.jobIds.map((id) => `_jobs/${id}/`),
      ])
        objects += await this.removePrefix(prefix)
      await dropPartition(this.d.db, day)
      jobs += stored.jobIds.length
      this.d.log.info({ day, jobs: stored.jobIds.length }, 'retention: a day of jobs and their files deleted')
    }
    const keepFrom = `${utcDay(now - this.d.retentionMs)}T00:00:00.000Z`
    await expireIdempotencyKeys(this.d.db, keepFrom)
    await expireUsage(this.d.db, utcDay(now - USAGE_RETENTION_DAYS * DAY_MS))
    this.d.metrics?.deletedJobs.inc(jobs)
    this.d.metrics?.deletedObjects.inc(objects)
    return { days: expired.length, jobs, objects }
  }

  /**
   * Rows still open whose UtilityJob does not exist (its gateway died between the row and the
   * UtilityJob, or it was deleted with its finalizer forced off): failed as `lost`. Failing rather
   * than re-creating the UtilityJob keeps the operator from ever creating jobs on its own.
   */
  async failLostHandoffs(): Promise<number> {
    let failed = 0
    const before = this.now() - LOST_HANDOFF_MS
    let after: { createdAt: string; id: string } | undefined
    for (;;) {
      const page = await openJobIdsCreatedBefore(this.d.db, before, after, OPEN_PAGE)
      for (const { id } of page) if (await this.lost(id)) failed++
      if (page.length < OPEN_PAGE) return failed
      after = page.at(-1)
    }
  }

  /** Fails job `id` as lost when its UtilityJob does not exist; whether it did. */
  private async lost(id: string): Promise<boolean> {
    const name = objectNameOf(id)
    if (this.d.utilityJobs.get(name, this.d.namespace)) return false
    if (await this.d.api.get(name)) return false // the cache is behind: it exists
    const job = await getJob(this.d.db, id)
    if (!job || (job.status?.state !== 'queued' && job.status?.state !== 'running')) return false
    await failUnstarted(
      this.d.db,
      job,
      { code: 'lost', message: 'The job was accepted but never reached the cluster.' },
      this.now(),
    )
    this.d.log.warn(
      { jobId: job.spec.jobId, createdAt: job.spec.createdAt },
      'job had a row but no UtilityJob: recorded as lost',
    )
    return true
  }

  /**
   * The counts the queued-job ceilings read, recomputed from the rows and corrected where they
   * drifted; the drift goes to a metric and, when there is any, to the log.
   */
  async recountQueued(): Promise<number> {
    const { drift, corrected } = await recountQueued(this.d.db)
    this.d.queuedCountsDrift?.set(drift)
    if (drift) this.d.log.warn({ drift, corrected }, 'queued counts drifted from the queued rows: corrected')
    return drift
  }

  private removePrefix(prefix: string): Promise<number> {
    return removePrefix(this.d.storage, this.d.bucket, prefix)
  }
}
