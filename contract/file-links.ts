import type { Client } from 'minio'
import { effectiveStatus, toJobView, type FileLink, type JobRecord, type JobView } from './job-view.js'
import { isoMs } from './time.js'

/**
 * Download links for stored files: presigned against the public storage address, made fresh
 * on every read so a fetched job always carries links that work for `ttlSeconds`. Shared by the
 * gateway (`GET /v1/jobs/{id}`) and the operator (the `data` of a callback), so both send the
 * same job view.
 */
export class FileLinks {
  constructor(
    private readonly presigner: Client,
    private readonly bucket: string,
    private readonly ttlSeconds: number,
  ) {}

  async view(job: JobRecord): Promise<JobView> {
    const files = effectiveStatus(job).result?.files ?? []
    const now = Date.now()
    const links = new Map<string, FileLink>()
    await Promise.all(
      files.map(async (f) => {
        const url = await this.presigner.presignedGetObject(this.bucket, f.key, this.ttlSeconds, {}, new Date(now))
        links.set(f.key, { url, expiresAt: isoMs(now + this.ttlSeconds * 1000) })
      }),
    )
    return toJobView(job, (key) => links.get(key)!)
  }
}
