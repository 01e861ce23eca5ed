import { utcDay } from './time.js'

/** Storage key of an output file: `<utility>/<YYYY-MM-DD>/<job_id>/<file>` (day of job creation, UTC). */
export function outputKey(utility: string, createdAtMs: number, jobId: string, file: string): string {
  return `${utility}/${utcDay(createdAtMs)}/${jobId}/${file}`
}

/**
 * Storage key of an upload: `uploads/<tenant code>/<YYYY-MM-DD>/<file_id>/<name>` (day of upload,
 * UTC; the owner's code, contract/tenants.ts). Uploads stored before codes have none
 * (`uploads/<YYYY-MM-DD>/…`).
 */
export function uploadKey(code: string, createdAtMs: number, fileId: string, name: string): string {
  return `uploads/${code}/${utcDay(createdAtMs)}/${fileId}/${name}`
}

/** Where and how to reach dutil's bucket (MinIO locally, any S3 in production). */
export interface StorageSettings {
  /** Base URL of the S3 API, e.g. http://127.0.0.1:9000. */
  endpoint: string
  region: string
  accessKey: string
  secretKey: string
  /** Temporary credentials (STS) come with a session token. */
  sessionToken?: string
  bucket: string
}

/**
 * Parses `s3://bucket/key` strictly, one way for the gateway that checks it and the runner that
 * reads it: the key is percent-decoded once (a space in a file name is `%20`), and a decoded key
 * with an empty, `.` or `..` segment, a backslash or a control character is no key at all.
 * Null when the URL is not of that form.
 */
export function parseS3Url(raw: string): { bucket: string; key: string } | null {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/([^?#]+)$/.exec(raw)
  if (!m) return null
  let key: string
  try {
    key = decodeURIComponent(m[2])
  } catch {
    return null
  }
  if (/[\\\u0000-\u001f\u007f]/.test(key)) return null
  if (key.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) return null
  return { bucket: m[1], key }
}
