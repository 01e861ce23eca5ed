import type { Client } from 'minio'
import { effectiveStatus, toJobView, type FileLink, type JobRecord, type JobView } from '../contract/job-view.js'
import type { StoredFile } from '../contract/runner-protocol.js'
import { hasOmittedFiles } from '../contract/status-budget.js'
import { isoMs } from '../contract/time.js'

/**
 * Media types a browser would run script in (or render as a document) when opened in place:
 * HTML, scripts, multipart, and every XML type, `+xml` suffixes included (XHTML, SVG, XSLT,
 * MathML, RSS, Atom… can all carry script or styles a browser applies).
 */
const ACTIVE_TYPES =
  /^(text\/html|text\/xml|application\/xml|text\/xsl|multipart\/|text\/javascript|application\/(x-)?javascript|[a-z0-9.+-]+\/[a-z0-9.-]+\+xml)\b/i

/**
 * Response headers the storage server sends for a download link (S3's `response-*` overrides,
 * signed into the link): always `Content-Disposition: attachment` with the file's name, so a
 * link opened in a browser downloads instead of rendering in the storage origin; and for types
 * a browser would execute or render as a page (HTML, SVG, XML, scripts), `application/octet-stream`,
 * so that not even a browser that ignores the disposition runs a crafted output's script.
 * Unzip outputs and html-pdf's inputs are caller-controlled content: this is their boundary.
 */
export function downloadHeaders(f: Pick<StoredFile, 'name' | 'contentType'>): Record<string, string> {
  const ascii = f.name.replace(/[^\x20-\x7e]|["\\]/g, '_')
  const headers: Record<string, string> = {
    'response-content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(f.name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`,
  }
  if (!f.contentType || ACTIVE_TYPES.test(f.contentType)) headers['response-content-type'] = 'application/octet-stream'
  return headers
}

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
    /** The job's row in the job record, for a status that left files out (contract/status-budget.ts). */
    private readonly fullRecord?: (jobId: string) => Promise<JobRecord | undefined>,
  ) {}

  async view(job: JobRecord): Promise<JobView> {
    if (hasOmittedFiles(effectiveStatus(job)) && this.fullRecord) {
      const full = await this.fullRecord(job.spec.jobId)
      if (full && !hasOmittedFiles(full.status)) job = full
    }
    const files = effectiveStatus(job).result?.files ?? []
    const now = Date.now()
    const links = new Map<string, FileLink>()
    await Promise.all(
      files.map(async (f) => {
        const url = await this.presigner.presignedGetObject(
          this.bucket,
          f.key,
          this.ttlSeconds,
          downloadHeaders(f),
          new Date(now),
        )
        links.set(f.key, { url, expiresAt: isoMs(now + this.ttlSeconds * 1000) })
      }),
    )
    return toJobView(job, (key) => links.get(key)!)
  }
}
