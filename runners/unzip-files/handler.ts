import { stat } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import yauzl from 'yauzl'
import { mapBounded } from '../common/bounded.js'
import { withSpooledInput } from '../common/read-input.js'
import { rejected, RunnerError } from '../common/runner-error.js'
import type { UtilityHandler } from '../common/run-utility.js'
import type { StoredFile } from '../../contract/runner-protocol.js'
import { checkEntries, contentTypeOf, type EntryInfo, isFolder, UNZIP_LIMITS } from './limits.js'

interface UnzipInput {
  url: string
}

const NOT_A_ZIP = 'The file is not a valid zip archive.'
/** Entries extracted and stored at once (each holds at most one 5 MB upload part). */
const UPLOAD_CONCURRENCY = 6

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    // decodeStrings off: names are decoded and judged here, so every unsafe path gets our message.
    yauzl.open(
      path,
      { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false },
      (err, zip) => (err || !zip ? reject(rejected(NOT_A_ZIP)) : resolve(zip)),
    )
  })
}

/** The central directory, read lazily one record at a time (bounded by the entry limit). */
function readDirectory(zip: yauzl.ZipFile): Promise<Array<{ info: EntryInfo; entry: yauzl.Entry }>> {
  if (zip.entryCount > UNZIP_LIMITS.maxEntries) {
    return Promise.reject(
      rejected(
        `The zip archive is refused: it has ${zip.entryCount} entries; at most ${UNZIP_LIMITS.maxEntries} are allowed.`,
      ),
    )
  }
  return new Promise((resolve, reject) => {
    const out: Array<{ info: EntryInfo; entry: yauzl.Entry }> = []
    zip.on('error', (err: Error) => reject(rejected(`${NOT_A_ZIP} (${err.message})`)))
    zip.on('end', () => resolve(out))
    zip.on('entry', (entry: yauzl.Entry) => {
      const raw = entry.fileName as unknown as Buffer
      const path = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, true)
      out.push({
        entry,
        info: {
          path,
          compressedSize: entry.compressedSize,
          uncompressedSize: entry.uncompressedSize,
          compressionMethod: entry.compressionMethod,
          flags: entry.generalPurposeBitFlag,
          versionMadeBy: entry.versionMadeBy,
          externalFileAttributes: entry.externalFileAttributes,
          localHeaderOffset: entry.relativeOffsetOfLocalHeader,
        },
      })
      zip.readEntry()
    })
    zip.readEntry()
  })
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (err, stream) =>
      err || !stream ? reject(rejected(`${NOT_A_ZIP} (${err?.message})`)) : resolve(stream),
    ),
  )
}

/** An entry's data, with yauzl's size and CRC errors turned into the bomb message. */
async function* entryData(stream: Readable, path: string): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of stream) yield chunk as Buffer
  } catch (err) {
    if (err instanceof RunnerError) throw err
    throw rejected(
      `The zip archive is refused: the entry ${JSON.stringify(path)} does not match its declared size or checksum (${(err as Error).message}).`,
    )
  }
}

/**
 * Spools the archive to scratch disk (yauzl needs random access to the central directory at
 * the end), checks every entry against the limits, then streams each file entry into storage.
 * Nested archives are stored as files and never expanded.
 */
export const handler: UtilityHandler<UnzipInput> = async ({ config, input, storage, storeStream, progress }) => {
  const from = {
    storage,
    ...config.outbound,
    maxBytes: UNZIP_LIMITS.maxArchiveBytes,
    what: 'zip archive',
    scratchDir: config.scratchDir,
    fileName: 'input.zip',
  }
  return withSpooledInput(input.url, from, async ({ path: archivePath }) => {
    const size = (await stat(archivePath)).size
    const zip = await openZip(archivePath)
    try {
      const entries = await readDirectory(zip)
      checkEntries(
        entries.map((e) => e.info),
        size,
      )
      const fileEntries = entries.filter((e) => !isFolder(e.info))
      let extracted = 0
      progress(0, fileEntries.length)
      // Several entries at once: per-object storage round trips dominate archives of many small files.
      const files: StoredFile[] = await mapBounded(fileEntries, UPLOAD_CONCURRENCY, async ({ info, entry }) => {
        const stream = await openEntry(zip, entry)
        const file = await storeStream(info.path, entryData(stream, info.path), contentTypeOf(info.path), {
          path: info.path,
        })
        progress(++extracted, fileEntries.length)
        return file
      })
      return { files, extras: { fileCount: files.length } }
    } finally {
      zip.close()
    }
  })
}
