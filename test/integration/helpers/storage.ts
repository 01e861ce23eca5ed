import { inject } from 'vitest'
import { storageClient } from '../../../platform/storage-client.js'

/** Every object key under a prefix of the test platform's bucket. */
export async function listKeys(prefix: string): Promise<string[]> {
  const s = inject('storage')
  const client = storageClient(s)
  const keys: string[] = []
  for await (const o of client.listObjectsV2(s.bucket, prefix, true)) if (o.name) keys.push(o.name)
  return keys.sort()
}

/** The output keys of a job (its `<utility>/<day>/<job_id>/` prefix). */
export function jobOutputs(job: { utility: string; id: string; createdAt: string }): Promise<string[]> {
  return listKeys(`${job.utility}/${job.createdAt.slice(0, 10)}/${job.id}/`)
}

export async function putObject(key: string, body: Buffer, contentType: string): Promise<string> {
  const s = inject('storage')
  await storageClient(s).putObject(s.bucket, key, body, body.length, { 'Content-Type': contentType })
  return `s3://${s.bucket}/${key}`
}

/**
 * Multipart uploads begun and neither completed nor aborted of one output of a job (MinIO lists
 * them by the object's whole name only: a prefix finds none).
 */
export async function unfinishedUploads(
  job: { utility: string; id: string; createdAt: string },
  name: string,
): Promise<string[]> {
  const s = inject('storage')
  const keys: string[] = []
  const stream = storageClient(s).listIncompleteUploads(
    s.bucket,
    `${job.utility}/${job.createdAt.slice(0, 10)}/${job.id}/${name}`,
    true,
  )
  for await (const u of stream as AsyncIterable<{ key: string }>) keys.push(u.key)
  return keys
}
