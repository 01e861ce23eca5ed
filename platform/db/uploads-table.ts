import type { Database, Queryable } from './database.js'

/** The `uploads` table: every query the gateway and the operator make of uploads. */

/** A file of an API key's: stored whole (`ready`), or announced for a direct upload (`pending`). */
export interface Upload {
  id: string
  apiKeyId: string
  name: string
  /** Bytes stored; of a pending upload, the bytes announced. */
  size: number
  contentType: string
  /** Null while pending. */
  sha256: string | null
  storageKey: string
  createdAt: string
  /** When the file expires; of a pending upload, when its upload window closes. */
  expiresAt: string
  state: 'pending' | 'ready'
  /** Storage's id of a pending multipart upload. */
  multipartUploadId?: string
  /** A pending upload's lifetime once complete. */
  expirySeconds?: number
}

/** An upload that is a file: stored whole, its hash known. */
export type ReadyUpload = Upload & { state: 'ready'; sha256: string }

interface UploadRow {
  id: string
  api_key_id: string
  name: string
  size: number
  content_type: string
  sha256: string | null
  storage_key: string
  /** Timestamps come back as PostgreSQL's text (platform/db/database.ts). */
  created_at: string
  expires_at: string
  state: 'pending' | 'ready'
  multipart_upload_id: string | null
  expiry_seconds: number | null
}

const COLUMNS =
  'id, api_key_id, name, size, content_type, sha256, storage_key, created_at, expires_at, state, multipart_upload_id, expiry_seconds'

const fromRow = (r: UploadRow): Upload => ({
  id: r.id,
  apiKeyId: r.api_key_id,
  name: r.name,
  size: r.size,
  contentType: r.content_type,
  sha256: r.sha256,
  storageKey: r.storage_key,
  createdAt: new Date(r.created_at).toISOString(),
  expiresAt: new Date(r.expires_at).toISOString(),
  state: r.state,
  ...(r.multipart_upload_id !== null ? { multipartUploadId: r.multipart_upload_id } : {}),
  ...(r.expiry_seconds !== null ? { expirySeconds: r.expiry_seconds } : {}),
})

/** What one API key may keep stored at once. */
export interface UploadQuota {
  maxFiles: number
  maxBytes: number
}

export type InsertOutcome = { kind: 'inserted' } | { kind: 'over_quota'; files: number; bytes: number }

/**
 * Records an upload storage already holds whole (or a pending one, with the size announced), if
 * the key's unexpired uploads, pending ones included, stay within its quota with it: the key's
 * uploads are counted under a lock on the key (concurrent uploads of one key take turns here), so
 * no two uploads can both take the last room.
 */
export async function insertUpload(db: Database, u: Upload, quota: UploadQuota, now: number): Promise<InsertOutcome> {
  const row: UploadRow = {
    id: u.id,
    api_key_id: u.apiKeyId,
    name: u.name,
    size: u.size,
    content_type: u.contentType,
    sha256: u.sha256,
    storage_key: u.storageKey,
    created_at: u.createdAt,
    expires_at: u.expiresAt,
    state: u.state,
    multipart_upload_id: u.multipartUploadId ?? null,
    expiry_seconds: u.expirySeconds ?? null,
  }
  // One round trip (migrations/0010_upload-insert.sql): the lock, the count and the insert.
  const { rows } = await db.query<{ held_files: string; held_bytes: string; inserted: boolean }>({
    name: 'upload_insert',
    text: 'SELECT held_files, held_bytes, inserted FROM upload_insert($1, $2, $3, $4)',
    values: [JSON.stringify(row), new Date(now).toISOString(), quota.maxFiles, quota.maxBytes],
  })
  const outcome = rows[0]
  if (outcome.inserted) return { kind: 'inserted' }
  return { kind: 'over_quota', files: Number(outcome.held_files), bytes: Number(outcome.held_bytes) }
}

/** An unexpired upload by id, pending or ready, or undefined (unknown, deleted or expired alike). */
export async function getUpload(db: Queryable, id: string, now: number): Promise<Upload | undefined> {
  const res = await db.query<UploadRow>({
    name: 'uploads_get',
    text: `SELECT ${COLUMNS} FROM uploads WHERE id = $1 AND expires_at > $2`,
    values: [id, new Date(now).toISOString()],
  })
  return res.rows[0] && fromRow(res.rows[0])
}

/** One key's unexpired files (pending uploads are none yet), newest first, after the keyset `before` (up to `limit`). */
export async function listUploads(
  db: Queryable,
  apiKeyId: string,
  now: number,
  limit: number,
  before?: { createdAt: string; id: string },
): Promise<Upload[]> {
  const res = await db.query<UploadRow>({
    name: 'uploads_list',
    text: `SELECT ${COLUMNS} FROM uploads WHERE api_key_id = $1 AND expires_at > $2 AND state = 'ready'
           AND (created_at, id) < ($3::timestamptz, $4) ORDER BY created_at DESC, id DESC LIMIT $5`,
    values: [apiKeyId, new Date(now).toISOString(), before?.createdAt ?? 'infinity', before?.id ?? '', limit],
  })
  return res.rows.map(fromRow)
}

/**
 * A pending upload becomes a file: its type, hash and size as storage holds it, and its expiry
 * from now. Returns the file, or undefined when it was not pending (completed, swept or deleted meanwhile).
 */
export async function completeUpload(
  db: Queryable,
  id: string,
  done: { size: number; contentType: string; sha256: string; expiresAt: string },
): Promise<Upload | undefined> {
  const res = await db.query<UploadRow>({
    name: 'uploads_complete',
    text: `UPDATE uploads SET state = 'ready', size = $2, content_type = $3, sha256 = $4, expires_at = $5,
             multipart_upload_id = NULL, expiry_seconds = NULL
           WHERE id = $1 AND state = 'pending' RETURNING ${COLUMNS}`,
    values: [id, done.size, done.contentType, done.sha256, done.expiresAt],
  })
  return res.rows[0] && fromRow(res.rows[0])
}

/** Removes an upload's row (its object is gone first); whether there was one. */
export async function deleteUpload(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query({ name: 'uploads_delete', text: 'DELETE FROM uploads WHERE id = $1', values: [id] })
  return (res.rowCount ?? 0) > 0
}

/** Uploads that expired before `now`, oldest expiry first (the sweep's page). */
export async function expiredUploads(db: Queryable, now: number, limit = 500): Promise<Upload[]> {
  const res = await db.query<UploadRow>({
    name: 'uploads_expired',
    text: `SELECT ${COLUMNS} FROM uploads WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2`,
    values: [new Date(now).toISOString(), limit],
  })
  return res.rows.map(fromRow)
}
