import { createHash } from 'node:crypto'
import type { Client } from 'minio'
import { newFileId } from '../contract/ids.js'
import { uploadKey } from '../contract/storage-keys.js'
import { tenantCode, uploadTenant } from '../contract/tenants.js'
import { isoMs } from '../contract/time.js'
import { guarded, type Database } from '../platform/db/database.js'
import {
  deleteUpload,
  getUpload,
  insertUpload,
  listUploads,
  type ReadyUpload,
  type Upload,
  type UploadQuota,
} from '../platform/db/uploads-table.js'
import { putStreamed } from '../platform/streamed-put.js'
import { ApiError, invalid } from './api-error.js'
import { SNIFF_BYTES, sniffContentType } from './upload-sniff.js'

export interface UploadSettings extends UploadQuota {
  /** The largest file one upload may be: the largest input any utility reads. */
  maxFileBytes: number
  defaultExpirySeconds: number
  maxExpirySeconds: number
}

export interface NewUpload {
  apiKeyId: string
  name: string
  expirySeconds: number
  /** The Content-Length the client announced, if any (checked before anything is read). */
  declaredBytes?: number
  body: AsyncIterable<Buffer>
  /** The id maker of the request's batch, when it stores several files (contract/ids.ts newFileBatch). */
  nextId?: () => string
}

const sizeText = (bytes: number) =>
  bytes >= 1024 ** 3 ? `${+(bytes / 1024 ** 3).toFixed(2)} GB` : `${Math.round(bytes / 1024 ** 2)} MB`

/** A key's quota of uploads passed: the answer, for an upload through the API and a direct one alike. */
export function overQuota(held: { files: number; bytes: number }, quota: UploadQuota): ApiError {
  return new ApiError(
    'rate_limited',
    `This API key already keeps ${held.files} uploads of ${sizeText(held.bytes)}; with this one it would pass its ${quota.maxFiles} files or ${sizeText(quota.maxBytes)}. Delete some, or wait for them to expire.`,
    undefined,
    { 'Retry-After': '60' },
  )
}

/**
 * Uploads: files an API key stores for its own jobs to read (docs/api.md, Uploads). A file is
 * streamed to storage as it arrives (never whole in memory), hashed and measured on the way, its
 * type told by its first bytes; it is recorded only once storage holds all of it, so a file is
 * usable exactly while its row exists and has not expired, and an upload cut short leaves nothing
 * anyone can use.
 */
export class Uploads {
  constructor(
    private readonly db: Database,
    private readonly storage: Client,
    readonly bucket: string,
    readonly settings: UploadSettings,
    private readonly now: () => number = Date.now,
  ) {}

  async store(u: NewUpload): Promise<ReadyUpload> {
    const max = this.settings.maxFileBytes
    const tooLarge = () =>
      invalid(`The file is larger than ${sizeText(max)}, the most one upload may be.`, [
        { path: 'body', message: `is larger than ${max} bytes` },
      ])
    if (u.declaredBytes !== undefined && u.declaredBytes > max) throw tooLarge()
    const now = this.now()
    const id = u.nextId?.() ?? newFileId(now)
    const key = uploadKey(tenantCode(uploadTenant(u.apiKeyId)), now, id, u.name)
    const hash = createHash('sha256')
    let size = 0
    let refused: ApiError | undefined
    // A client that goes away mid-body (or that the request time limit ends) is no server error.
    const it = u.body[Symbol.asyncIterator]()
    const read = async () => {
      try {
        return await it.next()
      } catch (err) {
        refused = new ApiError(
          'invalid_request',
          'The upload ended before the whole file arrived.',
          [{ path: 'body', message: 'ended early' }],
          {},
          err,
        )
        throw refused
      }
    }
    // The first bytes are read before storage is asked, so the object gets the sniffed type.
    const head: Buffer[] = []
    let headBytes = 0
    let done = false
    while (headBytes < SNIFF_BYTES) {
      const next = await read()
      if (next.done) {
        done = true
        break
      }
      head.push(next.value)
      headBytes += next.value.length
    }
    if (headBytes === 0)
      throw invalid('The file is empty: send its bytes as the request body.', [{ path: 'body', message: 'is empty' }])
    const contentType = sniffContentType(Buffer.concat(head).subarray(0, SNIFF_BYTES))
    async function* measured(): AsyncGenerator<Buffer> {
      const pass = (chunk: Buffer) => {
        size += chunk.length
        if (size > max) {
          refused = tooLarge()
          throw refused
        }
        hash.update(chunk)
        return chunk
      }
      for (const chunk of head) yield pass(chunk)
      if (done) return
      for (let next = await read(); !next.done; next = await read()) yield pass(next.value)
    }
    try {
      await putStreamed(this.storage, { bucket: this.bucket, key, contentType, size: u.declaredBytes }, measured())
    } catch (err) {
      if (refused) throw refused
      throw new ApiError(
        'internal',
        'The file could not be stored; send it again.',
        undefined,
        { 'Retry-After': '2' },
        err,
      )
    }
    const upload: Upload = {
      id,
      apiKeyId: u.apiKeyId,
      name: u.name,
      size,
      contentType,
      sha256: hash.digest('hex'),
      storageKey: key,
      createdAt: isoMs(now),
      expiresAt: isoMs(now + u.expirySeconds * 1000),
      state: 'ready',
    }
    const outcome = await guarded(() => insertUpload(this.db, upload, this.settings, this.now())).catch(
      async (err: unknown) => {
        await this.removeObject(key)
        throw err
      },
    )
    if (outcome.kind === 'over_quota') {
      await this.removeObject(key)
      throw overQuota(outcome, this.settings)
    }
    return upload as ReadyUpload
  }

  /**
   * The key's unexpired file, or undefined (another key's, unknown, deleted, expired and a direct
   * upload not yet complete alike).
   */
  async find(apiKeyId: string, id: string): Promise<ReadyUpload | undefined> {
    const upload = await guarded(() => getUpload(this.db, id, this.now()))
    return upload?.apiKeyId === apiKeyId && upload.state === 'ready' ? (upload as ReadyUpload) : undefined
  }

  list(apiKeyId: string, limit: number, before?: { createdAt: string; id: string }): Promise<ReadyUpload[]> {
    return guarded(() => listUploads(this.db, apiKeyId, this.now(), limit, before)) as Promise<ReadyUpload[]>
  }

  /** Deletes the file from storage, then its row: a file half-deleted is never usable again. */
  async delete(upload: Upload): Promise<void> {
    await this.removeObject(upload.storageKey)
    await guarded(() => deleteUpload(this.db, upload.id))
  }

  private async removeObject(key: string): Promise<void> {
    await this.storage.removeObject(this.bucket, key)
  }
}
