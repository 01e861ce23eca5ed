import { once } from 'node:events'
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import { ZipArchive } from 'archiver'
import { type FetchedBody, outboundGet } from '../common/outbound-fetch.js'
import { runUtility } from '../common/run-utility.js'
import { ARCHIVE_NAME, type ByteBudget, capped, entryDate, namedFailure, storeUncompressed } from './entries.js'

interface ZipFilesInput {
  files: Array<{ url: string; fileName: string }>
}

/**
 * Downloads opened ahead of the one being archived. Their bodies stay paused (TCP flow control
 * holds the data at the sender), so this hides per-file latency without adding memory.
 */
const PREFETCH = 4
const IDLE_MS = 60_000

const socketOf = (res: FetchedBody) => (res.body as IncomingMessage).socket

/**
 * Downloads each URL in order and streams it into one zip, which streams into storage. Memory
 * stays bounded whatever the total: only one download is open at a time, the next entry is
 * appended only when archiver has consumed the previous one (archiver queues whatever it is
 * given), and the archive is read only as fast as storage accepts parts.
 */
await runUtility<ZipFilesInput>(async ({ config, input, storeStream, log, progress }) => {
  const archive = new ZipArchive({ zlib: { level: 6 } })
  let archiveError: Error | undefined
  archive.on('warning', (err) => log.warn({ err }, 'archiver warning'))
  const failed = new Promise<never>((_, reject) => archive.on('error', (err) => reject((archiveError = err))))
  failed.catch(() => {})
  const stored = storeStream(ARCHIVE_NAME, archive, 'application/zip')
  // Storage failing stops the run at once (the archive would otherwise wait on back-pressure).
  const storageFailed = stored.then(() => new Promise<never>(() => {}))
  storageFailed.catch(() => {})
  let sourceError: Error | undefined
  const budget: ByteBudget = { total: 0 }
  const now = new Date()
  const ahead: Array<Promise<FetchedBody>> = []
  let next = 0
  const open = (i: number) => {
    const p = outboundGet(input.files[i].url, { ...config.outbound, timeoutMs: IDLE_MS }).then((res) => {
      socketOf(res)?.setTimeout(0) // waiting its turn is not idleness
      return res
    })
    p.catch(() => {})
    return p
  }
  progress(0, input.files.length)
  try {
    for (const [i, f] of input.files.entries()) {
      while (next < input.files.length && ahead.length < PREFETCH) ahead.push(open(next++))
      let source: Readable
      let date: Date
      try {
        const res = await ahead.shift()!
        socketOf(res)?.setTimeout(IDLE_MS)
        date = entryDate(res.headers['last-modified'], now)
        source = Readable.from(capped(res.body, budget), { objectMode: false })
      } catch (err) {
        throw namedFailure(i, f.fileName, err)
      }
      const sourceFailed = once(source, 'error').then(([err]) => Promise.reject((sourceError = namedFailure(i, f.fileName, err))))
      sourceFailed.catch(() => {})
      const appended = once(archive, 'entry')
      archive.append(source, { name: f.fileName, date, store: storeUncompressed(f.fileName) })
      await Promise.race([appended, sourceFailed, failed, storageFailed])
      progress(i + 1, input.files.length)
    }
    await Promise.race([archive.finalize(), failed, storageFailed])
  } catch (err) {
    for (const p of ahead) p.then((res) => res.body.destroy(), () => {})
    // Stop the upload: it must not complete a truncated archive.
    archive.destroy(err as Error)
    const storageError = await stored.then(() => undefined, (e: unknown) => e)
    // The download that broke explains the failure better than archiver's echo of it.
    throw sourceError ?? (err === archiveError && storageError ? storageError : err)
  }
  const file = await stored
  return { files: [file] }
})
