import * as Minio from 'minio'
import type { StorageSettings } from '../contract/storage-keys.js'
import { JsonBoundError, MAX_JSON_DEPTH, parseBoundedJson } from './bounded-json.js'
import { readAtMost } from './read-at-most.js'

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

/**
 * Reads a JSON object of at most `maxBytes` (the download stops as soon as it is over) and at
 * most `maxDepth` levels deep (MAX_JSON_DEPTH unless given); an object over either bound, or
 * malformed, throws JsonBoundError. Objects a runner wrote are read this way: a hostile one
 * cannot exhaust memory.
 */
export async function readJsonObject<T>(
  client: Minio.Client,
  bucket: string,
  key: string,
  maxBytes: number,
  maxDepth = MAX_JSON_DEPTH,
): Promise<T> {
  const bytes = await readAtMost(
    await client.getObject(bucket, key),
    maxBytes,
    () => new JsonBoundError(`${key} is larger than ${maxBytes} bytes`, 'size'),
  )
  return parseBoundedJson(bytes.toString('utf8'), maxDepth) as T
}

export async function writeJsonObject(
  client: Minio.Client,
  bucket: string,
  key: string,
  value: unknown,
): Promise<void> {
  await writeJsonText(client, bucket, key, JSON.stringify(value))
}

/** {@link writeJsonObject} of a value already serialised (its caller needed the text itself). */
export async function writeJsonText(client: Minio.Client, bucket: string, key: string, json: string): Promise<void> {
  const body = Buffer.from(json)
  await client.putObject(bucket, key, body, body.length, { 'Content-Type': 'application/json' })
}
