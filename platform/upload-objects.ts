import type { Client } from 'minio'
import type { Upload } from './db/uploads-table.js'

/**
 * What storage holds of an upload goes: the file, or of a direct upload never completed, the parts
 * of its multipart upload. Safe to repeat (a sweep that stops half-way, a refused completion).
 */
export async function discardUploadObjects(
  storage: Client,
  bucket: string,
  upload: Pick<Upload, 'storageKey' | 'multipartUploadId'>,
): Promise<void> {
  if (upload.multipartUploadId)
    await storage.abortMultipartUpload(bucket, upload.storageKey, upload.multipartUploadId).catch((err: unknown) => {
      if ((err as { code?: string }).code !== 'NoSuchUpload') throw err
    })
  await storage.removeObject(bucket, upload.storageKey)
}
