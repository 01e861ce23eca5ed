import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import { type FetchedBody, outboundGet } from '../common/outbound-fetch.js'
import { openInput } from '../common/read-input.js'
import { everyBytes } from '../common/memory.js'
import type { UtilityHandler } from '../common/run-utility.js'
import { ARCHIVE_NAME, type ByteBudget, capped, entryDate, namedFailure, storeUncompressed } from './entries.js'
import { type ZipEntry, zipArchive } from '../../platform/zip-writer.js'

interface ZipFilesInput {
  files: Array<{ url: string; fileName: string }>
}

/**
 * Downloads opened ahead of the one being archived, to hide per-file latency. A paused body still
 * holds what its socket read before the pause: with 1 MB files, four ahead cost 8 MB of the
 * runner's peak over one ahead (69 → 61 MB); two cost almost nothing (61 MB), at the same speed
 * (docs/benchmarks.md).
 */
const PREFETCH = 2
/** One file's most (docs/api.md), for a stored one told before it is read. */
const ZIP_FILE_MAX_BYTES = 1024 ** 3
const IDLE_MS = 60_000
const LEVEL = 6

const socketOf = (res: FetchedBody) => (res.body as IncomingMessage).socket

/**
 * Downloads each URL in order and streams it into one zip (zip-writer.ts), which streams into
 * storage. Everything is pulled: storage asks for the next part, the writer for the next piece
 * of the current download, so memory stays bounded whatever the total (one piece of one entry,
 * one upload part). A failed download names its file; the unfinished upload is aborted.
 */
export const handler: UtilityHandler<ZipFilesInput> = async ({ config, input, storage, storeStream, progress }) => {
  const budget: ByteBudget = { total: 0 }
  const now = new Date()
  const ahead: Array<Promise<FetchedBody>> = []
  let next = 0
  const open = (i: number) => {
    const { url } = input.files[i]
    // A file in dutil's own storage (an upload, an earlier output) is read with the job's grant.
    const fetched = url.startsWith('s3://')
      ? openInput(url, { storage, ...config.outbound, maxBytes: ZIP_FILE_MAX_BYTES, what: 'file' }).then(
          (stored): FetchedBody => ({ status: 200, headers: {}, body: Readable.from(stored.body), finalUrl: url }),
        )
      : outboundGet(url, { ...config.outbound, timeoutMs: IDLE_MS })
    const p = fetched.then((res) => {
      socketOf(res)?.setTimeout(0) // waiting its turn is not idleness
      return res
    })
    p.catch(() => {})
    return p
  }
  const downloaded = everyBytes(2 * 1024 * 1024)
  /** Failures of a download, re-labelled with the file they concern. */
  async function* labelled(i: number, fileName: string, body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of capped(body, budget)) {
        downloaded(chunk.length)
        yield chunk
      }
    } catch (err) {
      throw namedFailure(i, fileName, err)
    }
  }
  async function* entries(): AsyncGenerator<ZipEntry> {
    for (const [i, f] of input.files.entries()) {
      // Asked for the next entry: the writer has finished the previous one.
      progress(i, input.files.length)
      while (next < input.files.length && ahead.length < PREFETCH) ahead.push(open(next++))
      let res: FetchedBody
      try {
        res = await ahead.shift()!
      } catch (err) {
        throw namedFailure(i, f.fileName, err)
      }
      socketOf(res)?.setTimeout(IDLE_MS)
      yield {
        name: f.fileName,
        date: entryDate(res.headers['last-modified'], now),
        store: storeUncompressed(f.fileName),
        data: labelled(i, f.fileName, res.body),
      }
    }
    progress(input.files.length, input.files.length)
  }
  try {
    const file = await storeStream(
      ARCHIVE_NAME,
      zipArchive(entries(), { level: LEVEL }),
      'application/zip',
      undefined,
      { large: true },
    )
    return { files: [file] }
  } finally {
    for (const p of ahead)
      p.then(
        (res) => res.body.destroy(),
        () => {},
      )
  }
}
