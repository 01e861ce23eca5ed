import type { UtilityJobClient } from '../platform/utility-job-client.js'
import type { ObjectCache } from '@kubernetes/client-node'
import type { Client } from 'minio'
import type { Logger } from 'pino'
import { decodeTime } from 'ulid'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { ulidOf } from '../contract/ids.js'
import { effectiveStatus, isTerminal } from '../contract/job-view.js'
import { parseTime, utcDay } from '../contract/time.js'
import { CallbackController } from './callbacks/controller.js'

export const DAY_MS = 86_400_000
/** Storage prefix of every job's input and result manifest (contract/runner-protocol.ts). */
export const JOB_FILES_PREFIX = '_jobs/'

/** When a finished job's retention runs out: `retentionMs` after it finished. */
export function expiresAt(uj: UtilityJobResource, retentionMs: number): number | null {
  if (!isTerminal(uj)) return null
  const finished = parseTime(effectiveStatus(uj).finishedAt) ?? parseTime(uj.spec.createdAt)
  return finished === null ? null : finished + retentionMs
}

/**
 * Finished jobs whose retention has run out. A job whose callback is still pending stays until
 * the callback is settled (at most about 21 minutes), so a short retention never cuts a delivery.
 */
export function expiredJobs(
  jobs: readonly UtilityJobResource[],
  now: number,
  retentionMs: number,
): UtilityJobResource[] {
  return jobs.filter((uj) => {
    if (uj.metadata.deletionTimestamp) return false
    const at = expiresAt(uj, retentionMs)
    if (at === null || at > now) return false
    return !CallbackController.wants(uj)
  })
}

/** Every storage prefix a job's files live under: its outputs and its input/result manifest. */
export function storagePrefixesOf(uj: UtilityJobResource): string[] {
  const created = parseTime(uj.spec.createdAt) ?? 0
  return [`${uj.spec.utility}/${utcDay(created)}/${uj.spec.jobId}/`, `${JOB_FILES_PREFIX}${uj.spec.jobId}/`]
}

/** The job id a storage key belongs to (`<utility>/<day>/<job_id>/…` or `_jobs/<job_id>/…`), if any. */
export function jobIdOfKey(key: string): string | null {
  const parts = key.split('/')
  const id = key.startsWith(JOB_FILES_PREFIX) ? parts[1] : parts[2]
  return id && ulidOf(id, 'job') ? id : null
}

export interface RetentionDeps {
  namespace: string
  utilityJobs: ObjectCache<UtilityJobResource>
  /** UtilityJobs on the API server. */
  api: Pick<UtilityJobClient, 'delete'>
  storage: Client
  bucket: string
  retentionMs: number
  /** Top-level output folders to look for orphans in (the catalog's slugs). */
  utilities: readonly string[]
  log: Logger
  now?: () => number
  metrics?: { deletedJobs: { inc(n?: number): void }; deletedObjects: { inc(n?: number): void } }
}

/**
 * Deletes finished UtilityJobs and their files once the retention has run out (docs/api.md: jobs and
 * their files are kept 90 days by default). Files go first, then the object, so a sweep that
 * stops half-way leaves the object to be found again by the next one. The batch/v1 Job (owned
 * by the UtilityJob) goes with it through garbage collection.
 *
 * Files whose job has no UtilityJob at all (an input written by a request that then failed to
 * create its job, or a job deleted by hand) are orphans: they are deleted once their job id's own
 * timestamp is older than the retention plus a day. Job ids are ULIDs and output folders are
 * named by day, so both listings stop at the cutoff instead of walking the whole bucket.
 * One bucket belongs to one installation: another installation's files would look orphaned.
 */
export class RetentionSweeper {
  constructor(private readonly d: RetentionDeps) {}

  private now(): number {
    return this.d.now ? this.d.now() : Date.now()
  }

  async sweep(): Promise<{ jobs: number; objects: number }> {
    let jobs = 0
    let objects = 0
    for (const uj of expiredJobs(this.d.utilityJobs.list(this.d.namespace), this.now(), this.d.retentionMs)) {
      const log = this.d.log.child({ jobId: uj.spec.jobId, utility: uj.spec.utility })
      try {
        for (const prefix of storagePrefixesOf(uj)) objects += await this.removePrefix(prefix)
        if (!(await this.d.api.delete(uj.metadata.name))) continue
        jobs++
        log.info({ finishedAt: effectiveStatus(uj).finishedAt }, 'retention: job and its files deleted')
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'retention: deleting the job failed; the next sweep tries again')
      }
    }
    try {
      objects += await this.sweepOrphans()
    } catch (err) {
      this.d.log.warn({ err: (err as Error).message }, 'retention: the orphan sweep failed; the next sweep tries again')
    }
    this.d.metrics?.deletedJobs.inc(jobs)
    this.d.metrics?.deletedObjects.inc(objects)
    if (jobs || objects) this.d.log.info({ jobs, objects }, 'retention sweep done')
    return { jobs, objects }
  }

  private removePrefix(prefix: string): Promise<number> {
    return removePrefix(this.d.storage, this.d.bucket, prefix)
  }

  private async remove(keys: string[]): Promise<void> {
    await removeKeys(this.d.storage, this.d.bucket, keys)
  }

  private async sweepOrphans(): Promise<number> {
    const cutoff = this.now() - this.d.retentionMs - DAY_MS
    const known = new Set(this.d.utilityJobs.list(this.d.namespace).map((uj) => uj.spec.jobId))
    const orphan = (key: string) => {
      const id = jobIdOfKey(key)
      return id !== null && !known.has(id) && decodeTime(ulidOf(id, 'job')!) < cutoff
    }
    let removed = 0
    // _jobs/job_<ULID>/…: sorted by creation time, so the listing stops at the first newer id.
    const stale: string[] = []
    const listing = this.d.storage.listObjectsV2(this.d.bucket, JOB_FILES_PREFIX, true)
    for await (const item of listing) {
      const id = item.name ? jobIdOfKey(item.name) : null
      if (id && decodeTime(ulidOf(id, 'job')!) >= cutoff) break
      if (item.name && orphan(item.name)) stale.push(item.name)
    }
    await this.remove(stale)
    removed += stale.length
    // <utility>/<YYYY-MM-DD>/…: only days wholly before the cutoff are listed.
    const cutoffDay = utcDay(cutoff)
    for (const utility of this.d.utilities) {
      const days: string[] = []
      for await (const item of this.d.storage.listObjectsV2(this.d.bucket, `${utility}/`, false)) {
        const day = item.prefix?.slice(utility.length + 1, -1)
        if (day && /^\d{4}-\d{2}-\d{2}$/.test(day) && day < cutoffDay) days.push(day)
      }
      for (const day of days) {
        const keys: string[] = []
        for await (const item of this.d.storage.listObjectsV2(this.d.bucket, `${utility}/${day}/`, true))
          if (item.name && orphan(item.name)) keys.push(item.name)
        await this.remove(keys)
        removed += keys.length
      }
    }
    if (removed) this.d.log.info({ objects: removed }, 'retention: orphaned files deleted')
    return removed
  }
}

/** Deletes every object under `prefix`; returns how many there were. */
export async function removePrefix(storage: Client, bucket: string, prefix: string): Promise<number> {
  const keys: string[] = []
  for await (const item of storage.listObjectsV2(bucket, prefix, true)) if (item.name) keys.push(item.name)
  await removeKeys(storage, bucket, keys)
  return keys.length
}

/** Deletes objects, a thousand per request (S3's limit). */
export async function removeKeys(storage: Client, bucket: string, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) await storage.removeObjects(bucket, keys.slice(i, i + 1000))
}
