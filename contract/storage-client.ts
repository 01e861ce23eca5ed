import * as Minio from 'minio'

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

/** An S3 client for dutil's bucket (MinIO locally, any S3 in production). */
export function storageClient(s: StorageSettings): Minio.Client {
  const url = new URL(s.endpoint)
  const useSSL = url.protocol === 'https:'
  return new Minio.Client({
    endPoint: url.hostname,
    port: url.port ? Number(url.port) : useSSL ? 443 : 80,
    useSSL,
    region: s.region,
    accessKey: s.accessKey,
    secretKey: s.secretKey,
    ...(s.sessionToken ? { sessionToken: s.sessionToken } : {}),
    pathStyle: true,
  })
}

export async function readJsonObject<T>(client: Minio.Client, bucket: string, key: string): Promise<T> {
  const stream = await client.getObject(bucket, key)
  const chunks: Buffer[] = []
  for await (const c of stream) chunks.push(c as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T
}

export async function writeJsonObject(client: Minio.Client, bucket: string, key: string, value: unknown): Promise<void> {
  const body = Buffer.from(JSON.stringify(value))
  await client.putObject(bucket, key, body, body.length, { 'Content-Type': 'application/json' })
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
