import * as Minio from 'minio'
import type { StorageSettings } from '../contract/storage-keys.js'

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
