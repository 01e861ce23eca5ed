import type { Client } from 'minio'
import type { Logger } from 'pino'
import { migrateDatabase } from '../platform/db/migrate.js'

export interface StoresToPrepare {
  databaseUrl: string
  storage: Client
  bucket: string
  region: string
  /** Make the bucket when it is missing (DUTIL_S3_CREATE_BUCKET: a trial's own MinIO). */
  createBucket: boolean
  /** The job record's partitions ahead and what an earlier version left to tidy. */
  sweepJobRecord(): Promise<unknown>
  log: Logger
}

/**
 * The leader's first duty: this build's schema (node-pg-migrate, under its advisory lock), the
 * partitions ahead and (createBucket) the bucket. A store that is down is waited for, every few
 * seconds (at most 5 s apart: a trial install starts its database beside the operator), until
 * `signal` aborts.
 */
export async function prepareStores(s: StoresToPrepare, signal: AbortSignal): Promise<void> {
  for (let delay = 1000; !signal.aborted; delay = Math.min(delay * 2, 5_000)) {
    try {
      await migrateDatabase(s.databaseUrl, s.log)
      await s.sweepJobRecord()
      if (s.createBucket && !(await s.storage.bucketExists(s.bucket))) {
        await s.storage.makeBucket(s.bucket, s.region)
        s.log.info({ bucket: s.bucket }, 'storage bucket made')
      }
      return
    } catch (err) {
      s.log.warn(
        { err: (err as Error).message, retryInMs: delay },
        'preparing the job record and storage failed, retrying',
      )
      await new Promise((r) => setTimeout(r, delay))
    }
  }
}
