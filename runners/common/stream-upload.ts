import { collectYoung } from './memory.js'
import type { ObjectStore } from './object-store.js'
import { RunnerError } from './runner-error.js'

/** S3's smallest part (except the last): the unit of memory an upload holds. */
export const PART_SIZE = 5 * 1024 * 1024

export interface UploadTarget {
  store: ObjectStore
  key: string
  contentType: string
  /** Wraps every storage call (the runner frame times storage with it). */
  track?: <T>(call: () => Promise<T>) => Promise<T>
  /** The output is expected to take more than one part (zip-files' archive): see uploadStream. */
  large?: boolean
}

export interface Uploaded {
  size: number
  /** Time spent waiting on storage (not overlapped with reading the source). */
  storageMs: number
}

/** A failure of the storage side of an upload, as opposed to its source. */
export class StorageWriteError extends RunnerError {
  constructor(readonly inner: unknown) {
    super('storage_error', 'Copying the output to storage failed.')
  }
}

async function guarded<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    throw err instanceof StorageWriteError ? err : new StorageWriteError(err)
  }
}

/**
 * Streams a source of unknown length into one object with bounded memory: one part buffer (two
 * with `overlap`: one filling while the other uploads), so at most 1 (2) × `partSize` bytes are
 * held whatever the total. The source is read only as fast as parts are accepted: back-pressure reaches the
 * producer. Small outputs (one part) go up in a single PUT. Errors from the source pass through
 * unchanged; errors from storage become `storage_error`; a started multipart upload is aborted
 * on any failure.
 */
export async function uploadStream(
  source: AsyncIterable<Uint8Array>,
  target: UploadTarget,
  partSize = PART_SIZE,
  overlap = false,
): Promise<Uploaded> {
  const { store, key, contentType } = target
  const storage = <T>(call: () => Promise<T>) => guarded(() => (target.track ? target.track(call) : call()))
  // One buffer by default (memory first); with `overlap` the next part fills while one uploads.
  // Buffers start small and double up to the part size, so many small outputs cost little (a
  // whole part for each of unzip-files' 500 entries made V8 count 5 MB per entry and collect so
  // often that the run took 1.9 → 2.7 s). An output known to be large (`target.large`) gets the
  // whole part at once: the last doubling held 2.5 + 5 MB while it copied (zip-files' peak went
  // 73 → 69 MB without it).
  const initial = target.large ? partSize : Math.min(partSize, 64 * 1024)
  const first = Buffer.allocUnsafe(initial)
  const buffers = [first, overlap ? Buffer.allocUnsafe(initial) : first]
  const room = (needed: number) => {
    const buf = buffers[current]
    if (buf.length >= needed || buf.length >= partSize) return
    let size = buf.length
    while (size < needed && size < partSize) size *= 2
    const grown = Buffer.allocUnsafe(Math.min(size, partSize))
    buf.copy(grown, 0, 0, filled)
    buffers[current] = grown
    if (!overlap) buffers[1 - current] = grown
  }
  let current = 0
  let filled = 0
  let size = 0
  let storageMs = 0
  let uploadId: string | undefined
  let inFlight: Promise<void> | undefined
  const etags: { part: number; etag: string }[] = []

  const waitForInFlight = async () => {
    if (!inFlight) return
    const t0 = Date.now()
    try {
      await inFlight
    } finally {
      inFlight = undefined
      storageMs += Date.now() - t0
    }
  }

  const sendPart = async (last: boolean) => {
    await waitForInFlight()
    if (!uploadId) {
      const t0 = Date.now()
      uploadId = await storage(() => store.initiateMultipart(key, contentType))
      storageMs += Date.now() - t0
    }
    const part = etags.length + 1
    const payload = buffers[current].subarray(0, filled)
    const id = uploadId
    etags.push({ part, etag: '' })
    const upload = storage(() => store.uploadPart(key, id, part, payload)).then((etag) => {
      etags[part - 1].etag = etag
    })
    // Keep a rejection from going unhandled while the next part fills; it is awaited later.
    upload.catch(() => {})
    inFlight = upload
    current = 1 - current
    filled = 0
    if (last || !overlap) await waitForInFlight()
    collectYoung() // the buffers that made this part (see memory.ts)
  }

  try {
    for await (const chunk of source) {
      let offset = 0
      while (offset < chunk.length) {
        const n = Math.min(partSize - filled, chunk.length - offset)
        room(filled + n)
        buffers[current].set(chunk.subarray(offset, offset + n), filled)
        filled += n
        offset += n
        size += n
        if (filled === partSize) await sendPart(false)
      }
    }
    if (!uploadId) {
      const body = buffers[current].subarray(0, filled)
      const t0 = Date.now()
      await storage(() => store.putObject(key, body, contentType))
      storageMs += Date.now() - t0
      return { size, storageMs }
    }
    if (filled > 0) await sendPart(true)
    else await waitForInFlight()
    const t0 = Date.now()
    await storage(() => store.completeMultipart(key, uploadId!, etags))
    storageMs += Date.now() - t0
    return { size, storageMs }
  } catch (err) {
    if (uploadId) {
      const id = uploadId
      await inFlight?.catch(() => {})
      await store.abortMultipart(key, id).catch(() => {})
    }
    throw err
  }
}
