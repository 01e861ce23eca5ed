import type { Client } from 'minio'
import type { Logger } from 'pino'
import type { Database } from '../platform/db/database.js'
import { deleteUpload, expiredUploads } from '../platform/db/uploads-table.js'
import { discardUploadObjects } from '../platform/upload-objects.js'

/** Expired uploads read per page by the sweep. */
const SWEEP_PAGE = 500

export interface UploadSweepDeps {
  db: Database
  storage: Client
  bucket: string
  log: Logger
  now?: () => number
}

/**
 * Expired uploads go (and direct uploads never completed within their window): each file, or
 * what storage holds of it, from storage first, then its row (a sweep that stops half-way
 * finds the rest next time). A job can no longer name one from its expiry on (the gateway checks
 * it at accept); the sweep frees the bytes.
 */
export class UploadSweeper {
  constructor(private readonly d: UploadSweepDeps) {}

  async sweep(): Promise<number> {
    const now = this.d.now ? this.d.now() : Date.now()
    let removed = 0
    for (;;) {
      const page = await expiredUploads(this.d.db, now, SWEEP_PAGE)
      for (const u of page) {
        await discardUploadObjects(this.d.storage, this.d.bucket, u)
        await deleteUpload(this.d.db, u.id)
        removed++
      }
      if (page.length < SWEEP_PAGE) break
    }
    if (removed) this.d.log.info({ removed }, 'expired uploads deleted')
    return removed
  }
}
