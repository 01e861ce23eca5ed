import { createHash } from 'node:crypto'
import type { Client } from 'minio'
import { newFileId } from '../contract/ids.js'
import { uploadKey } from '../contract/storage-keys.js'
import { tenantCode, uploadTenant } from '../contract/tenants.js'
import { isoMs } from '../contract/time.js'
import { guarded, type Database } from '../platform/db/database.js'
import {
  completeUpload,
  deleteUpload,
  getUpload,
  insertUpload,
  type ReadyUpload,
  type Upload,
} from '../platform/db/uploads-table.js'
import { discardUploadObjects } from '../platform/upload-objects.js'
import { ApiError, invalid, notFound } from './api-error.js'
import type { UploadDigests } from './upload-digests.js'
import { SNIFF_BYTES, sniffContentType } from './upload-sniff.js'
import { overQuota, type UploadSettings } from './uploads.js'

/** Files up to this size go up in one PUT; larger ones in parts of this size. */
export const DIRECT_PART_BYTES = 64 * 1024 ** 2
/** How long the presigned requests of a direct upload stay valid, and its pending row lives. */
export const DIRECT_UPLOAD_WINDOW_SECONDS = 3600
/** The most parts a completion may name (a 1 GiB file in 64 MiB parts is 16). */
const MAX_PARTS = 10_000

export interface DirectUploadOffer {
  upload: Upload
  partSize: number
  /** Each part's presigned PUT: the bytes from (partNumber − 1) × partSize, partSize of them (the last: the rest). */
  parts: Array<{ partNumber: number; url: string }>
}

/**
 * Direct uploads (docs/api.md, Uploads): a large file goes straight to storage by presigned
 * requests through the files host, never through the API. The gateway records the announced file
 * as pending (counted against the key's quota at its announced size), presigns one PUT, or one
 * per part of a multipart upload; the client sends the bytes, then completes it: storage must hold
 * exactly the size announced, and only then is it a file a job can name, with its type and SHA-256
 * read from what storage holds.
 */
export class DirectUploads {
  constructor(
    private readonly db: Database,
    private readonly storage: Client,
    /** Presigns for the public endpoint (the files host). */
    private readonly presigner: Client,
    private readonly bucket: string,
    private readonly settings: UploadSettings,
    /** What the files host hashed of the parts as they passed (else the file is read back). */
    private readonly digests?: UploadDigests,
    private readonly now: () => number = Date.now,
  ) {}

  async announce(a: {
    apiKeyId: string
    name: string
    size: number
    expirySeconds: number
  }): Promise<DirectUploadOffer> {
    if (a.size > this.settings.maxFileBytes)
      throw invalid(`The file is larger than ${this.settings.maxFileBytes} bytes, the most one upload may be.`, [
        { path: 'size', message: `is larger than ${this.settings.maxFileBytes}` },
      ])
    const now = this.now()
    const id = newFileId(now)
    const key = uploadKey(tenantCode(uploadTenant(a.apiKeyId)), now, id, a.name)
    const multipart = a.size > DIRECT_PART_BYTES
    let multipartUploadId: string | undefined
    try {
      if (multipart) multipartUploadId = await this.storage.initiateNewMultipartUpload(this.bucket, key, {})
    } catch (err) {
      throw storageUnavailable(err)
    }
    const upload: Upload = {
      id,
      apiKeyId: a.apiKeyId,
      name: a.name,
      size: a.size,
      contentType: 'application/octet-stream',
      sha256: null,
      storageKey: key,
      createdAt: isoMs(now),
      expiresAt: isoMs(now + DIRECT_UPLOAD_WINDOW_SECONDS * 1000),
      state: 'pending',
      expirySeconds: a.expirySeconds,
      ...(multipartUploadId ? { multipartUploadId } : {}),
    }
    const outcome = await guarded(() => insertUpload(this.db, upload, this.settings, now)).catch(
      async (err: unknown) => {
        await this.abort(upload).catch(() => {})
        throw err
      },
    )
    if (outcome.kind === 'over_quota') {
      await this.abort(upload).catch(() => {})
      throw overQuota(outcome, this.settings)
    }
    const count = multipart ? Math.ceil(a.size / DIRECT_PART_BYTES) : 1
    const parts: DirectUploadOffer['parts'] = []
    for (let n = 1; n <= count; n++) {
      const url = await this.presigner.presignedUrl(
        'PUT',
        this.bucket,
        key,
        DIRECT_UPLOAD_WINDOW_SECONDS,
        multipartUploadId ? { partNumber: String(n), uploadId: multipartUploadId } : {},
        new Date(now),
      )
      parts.push({ partNumber: n, url })
    }
    return { upload, partSize: multipart ? DIRECT_PART_BYTES : a.size, parts }
  }

  /**
   * The pending upload becomes a file once storage holds exactly what was announced (a multipart
   * upload is first assembled from the parts the client names, with the ETags storage gave it).
   * Anything else is a 400, and the upload is gone: nothing partial is ever usable.
   */
  async complete(apiKeyId: string, id: string, partTags: Array<{ partNumber: number; etag: string }> | undefined) {
    const upload = await guarded(() => getUpload(this.db, id, this.now()))
    if (!upload || upload.apiKeyId !== apiKeyId) throw notFound(`No upload ${JSON.stringify(id.slice(0, 100))}.`)
    if (upload.state === 'ready') return upload as ReadyUpload
    const refuse = async (message: string, path: string) => {
      await this.abort(upload).catch(() => {})
      await guarded(() => deleteUpload(this.db, upload.id))
      return invalid(`${message} The upload is discarded; announce it again.`, [{ path, message }])
    }
    let partEtags: string[] | undefined
    if (upload.multipartUploadId) {
      const count = Math.ceil(upload.size / DIRECT_PART_BYTES)
      const tags = [...(partTags ?? [])].sort((a, b) => a.partNumber - b.partNumber)
      if (tags.length !== count || tags.some((t, i) => t.partNumber !== i + 1))
        throw invalid(`Name each of the ${count} parts once, with the ETag storage answered for it.`, [
          { path: 'parts', message: `must be parts 1 to ${count}` },
        ])
      partEtags = tags.map((t) => t.etag)
      try {
        await this.storage.completeMultipartUpload(
          this.bucket,
          upload.storageKey,
          upload.multipartUploadId,
          tags.map((t) => ({ part: t.partNumber, etag: t.etag })),
        )
      } catch (err) {
        const code = (err as { code?: string }).code
        if (code === 'InvalidPart' || code === 'InvalidPartOrder' || code === 'EntityTooSmall')
          throw invalid(
            'Storage does not hold those parts: send each part, then name its ETag as storage answered it.',
            [{ path: 'parts', message: 'do not match what storage holds' }],
          )
        if (code === 'NoSuchUpload') throw await refuse('Storage holds no such upload any more.', 'id')
        throw storageUnavailable(err)
      }
    }
    let size: number
    let etag: string
    try {
      ;({ size, etag } = await this.storage.statObject(this.bucket, upload.storageKey))
    } catch (err) {
      const code = (err as { code?: string }).code
      if (code === 'NotFound' || code === 'NoSuchKey')
        throw invalid('Storage holds nothing of this upload yet: send the file to its upload URL first.', [
          { path: 'id', message: 'has not been sent' },
        ])
      throw storageUnavailable(err)
    }
    if (size !== upload.size)
      throw await refuse(`Storage holds ${size} bytes of this upload; ${upload.size} were announced.`, 'size')
    // The parts storage assembled (or its one PUT), hashed on their way through the files host,
    // or else the file as storage holds it, read back.
    const known = this.digests?.take(upload.storageKey, partEtags ?? [etag], upload.multipartUploadId)
    const { contentType, sha256 } = known
      ? { contentType: sniffContentType(known.head), sha256: known.sha256 }
      : await this.read(upload.storageKey)
    const done = await guarded(() =>
      completeUpload(this.db, upload.id, {
        size,
        contentType,
        sha256,
        expiresAt: isoMs(this.now() + (upload.expirySeconds ?? this.settings.defaultExpirySeconds) * 1000),
      }),
    )
    // Completed by a concurrent request meanwhile: that one's file.
    const file = done ?? (await guarded(() => getUpload(this.db, id, this.now())))
    if (!file || file.state !== 'ready') throw notFound(`No upload ${JSON.stringify(id.slice(0, 100))}.`)
    return file as ReadyUpload
  }

  /** What storage holds of a pending upload goes (the sweep, a refused completion, a delete). */
  abort(upload: Pick<Upload, 'storageKey' | 'multipartUploadId'>): Promise<void> {
    return discardUploadObjects(this.storage, this.bucket, upload)
  }

  /** The stored file's type (its first bytes) and SHA-256, read back at storage's speed. */
  private async read(key: string): Promise<{ contentType: string; sha256: string }> {
    const hash = createHash('sha256')
    const head: Buffer[] = []
    let headBytes = 0
    try {
      for await (const chunk of await this.storage.getObject(this.bucket, key)) {
        const b = chunk as Buffer
        if (headBytes < SNIFF_BYTES) {
          head.push(b)
          headBytes += b.length
        }
        hash.update(b)
      }
    } catch (err) {
      throw storageUnavailable(err)
    }
    return {
      contentType: sniffContentType(Buffer.concat(head).subarray(0, SNIFF_BYTES)),
      sha256: hash.digest('hex'),
    }
  }
}

/** Parts a completion names (JSON), bounded before use. */
export function parsePartTags(body: unknown): Array<{ partNumber: number; etag: string }> | undefined {
  const bad = () =>
    invalid('The body must be {"parts": [{"partNumber": 1, "etag": "…"}, …]}, or empty for a single PUT.', [
      { path: 'parts', message: 'must be a list of { partNumber, etag }' },
    ])
  if (body === undefined) return undefined
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw bad()
  if (Object.keys(body).length === 0) return undefined
  const parts = (body as { parts?: unknown }).parts
  if (!Array.isArray(parts) || parts.length > MAX_PARTS || Object.keys(body as object).length !== 1) throw bad()
  return parts.map((p) => {
    const { partNumber, etag } = (p ?? {}) as { partNumber?: unknown; etag?: unknown }
    if (!Number.isInteger(partNumber) || (partNumber as number) < 1 || (partNumber as number) > MAX_PARTS) throw bad()
    if (typeof etag !== 'string' || etag.length < 1 || etag.length > 128) throw bad()
    return { partNumber: partNumber as number, etag: etag.replace(/^"|"$/g, '') }
  })
}

function storageUnavailable(err: unknown): ApiError {
  return new ApiError(
    'internal',
    'Storage could not take the upload; try again.',
    undefined,
    { 'Retry-After': '2' },
    err,
  )
}
