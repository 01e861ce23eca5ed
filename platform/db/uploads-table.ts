import { inTransaction, type Database, type Queryable } from './database.js'

/** The `uploads` table: every query the gateway and the operator make of uploads. */

export interface Upload {
  id: string
  apiKeyId: string
  name: string
  size: number
  contentType: string
  sha256: string
  storageKey: string
  createdAt: string
  expiresAt: string
}

interface UploadRow {
  id: string
  api_key_id: string
  name: string
  size: number
  content_type: string
  sha256: string
  storage_key: string
  /** Timestamps come back as PostgreSQL's text (platform/db/database.ts). */
  created_at: string
  expires_at: string
}

const COLUMNS = 'id, api_key_id, name, size, content_type, sha256, storage_key, created_at, expires_at'

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
})

/** What one API key may keep stored at once. */
export interface UploadQuota {
  maxFiles: number
  maxBytes: number
}

export type InsertOutcome = { kind: 'inserted' } | { kind: 'over_quota'; files: number; bytes: number }

/**
 * Records an upload storage already holds whole, if the key's unexpired uploads stay within its
 * quota with it: the key's uploads are counted under a lock on the key (concurrent uploads of one
 * key take turns here), so no two uploads can both take the last room.
 */
export async function insertUpload(db: Database, u: Upload, quota: UploadQuota, now: number): Promise<InsertOutcome> {
  return inTransaction(db, async (client) => {
    await client.query({
      name: 'uploads_lock_key',
      text: "SELECT pg_advisory_xact_lock(hashtext('uploads/' || $1))",
      values: [u.apiKeyId],
    })
    const held = (
      await client.query<{ files: number; bytes: number | null }>({
        name: 'uploads_held',
        text: 'SELECT count(*) AS files, sum(size)::bigint AS bytes FROM uploads WHERE api_key_id = $1 AND expires_at > $2',
        values: [u.apiKeyId, new Date(now).toISOString()],
      })
    ).rows[0]
    const files = Number(held.files)
    const bytes = Number(held.bytes ?? 0)
    if (files + 1 > quota.maxFiles || bytes + u.size > quota.maxBytes) return { kind: 'over_quota', files, bytes }
    await client.query({
      name: 'uploads_insert',
      text: `INSERT INTO uploads (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      values: [u.id, u.apiKeyId, u.name, u.size, u.contentType, u.sha256, u.storageKey, u.createdAt, u.expiresAt],
    })
    return { kind: 'inserted' }
  })
}

/** An unexpired upload by id, or undefined (unknown, deleted or expired alike). */
export async function getUpload(db: Queryable, id: string, now: number): Promise<Upload | undefined> {
  const res = await db.query<UploadRow>({
    name: 'uploads_get',
    text: `SELECT ${COLUMNS} FROM uploads WHERE id = $1 AND expires_at > $2`,
    values: [id, new Date(now).toISOString()],
  })
  return res.rows[0] && fromRow(res.rows[0])
}

/** One key's unexpired uploads, newest first, after the keyset `before` (up to `limit`). */
export async function listUploads(
  db: Queryable,
  apiKeyId: string,
  now: number,
  limit: number,
  before?: { createdAt: string; id: string },
): Promise<Upload[]> {
  const res = await db.query<UploadRow>({
    name: 'uploads_list',
    text: `SELECT ${COLUMNS} FROM uploads WHERE api_key_id = $1 AND expires_at > $2
           AND (created_at, id) < ($3::timestamptz, $4) ORDER BY created_at DESC, id DESC LIMIT $5`,
    values: [apiKeyId, new Date(now).toISOString(), before?.createdAt ?? 'infinity', before?.id ?? '', limit],
  })
  return res.rows.map(fromRow)
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
