import { RunnerError, rejected } from '../common/runner-error.js'

/** Size caps of zip-files (docs/api.md, Utilities). */
export const ZIP_SIZE_LIMITS = {
  maxFileBytes: 1024 * 1024 * 1024,
  maxTotalBytes: 3 * 1024 * 1024 * 1024,
} as const

/** The archive's file name under the job's prefix. */
export const ARCHIVE_NAME = 'files.zip'

/**
 * Formats that are already compressed: stored as they are, because deflating them again costs
 * CPU and gains next to nothing.
 */
const COMPRESSED = new Set([
  'zip',
  'gz',
  'tgz',
  'bz2',
  'xz',
  'zst',
  '7z',
  'rar',
  'jpg',
  'jpeg',
  'png',
  'gif',
  'webp',
  'avif',
  'heic',
  'mp3',
  'm4a',
  'aac',
  'ogg',
  'opus',
  'flac',
  'mp4',
  'm4v',
  'mov',
  'webm',
  'mkv',
  'avi',
  'docx',
  'xlsx',
  'pptx',
  'odt',
  'ods',
  'odp',
  'epub',
  'jar',
  'apk',
  'woff',
  'woff2',
])

export function storeUncompressed(fileName: string): boolean {
  const ext = /\.([a-z0-9]+)$/i.exec(fileName)?.[1]?.toLowerCase()
  return ext !== undefined && COMPRESSED.has(ext)
}

/** The entry's modification time: the server's Last-Modified when it is a sane date, else the fallback. */
export function entryDate(lastModified: string | undefined, fallback: Date): Date {
  if (!lastModified) return fallback
  const t = Date.parse(lastModified)
  // DOS dates in zip entries cover 1980 to 2107.
  if (Number.isNaN(t) || t < Date.UTC(1980, 0, 2) || t > Date.UTC(2107, 0, 1)) return fallback
  return new Date(t)
}

/** Describes input file i for messages: `files.3 ("b.png")`. */
export function fileLabel(index: number, fileName: string): string {
  return `files.${index} (${JSON.stringify(fileName.slice(0, 100))})`
}

/** Re-labels a download failure with the file it concerns, keeping its upstream status. */
export function namedFailure(index: number, fileName: string, err: unknown): RunnerError {
  if (err instanceof RunnerError) {
    if (err.code !== 'upstream_rejected') return err
    return rejected(`${fileLabel(index, fileName)}: ${err.message}`, err.upstreamStatus)
  }
  return rejected(`${fileLabel(index, fileName)}: downloading failed: ${(err as Error)?.message ?? String(err)}`)
}

export interface ByteBudget {
  total: number
}

/**
 * Passes a download through, refusing it once it passes the per-file cap or the whole run
 * passes the total cap. Read errors of the body become upstream_rejected.
 */
export async function* capped(
  body: AsyncIterable<Uint8Array>,
  budget: ByteBudget,
  limits: { maxFileBytes: number; maxTotalBytes: number } = ZIP_SIZE_LIMITS,
): AsyncGenerator<Uint8Array> {
  let size = 0
  try {
    for await (const chunk of body) {
      size += chunk.length
      budget.total += chunk.length
      if (size > limits.maxFileBytes)
        throw rejected(`the file is larger than the ${mb(limits.maxFileBytes)} limit per file.`)
      if (budget.total > limits.maxTotalBytes)
        throw rejected(`the files together are larger than the ${mb(limits.maxTotalBytes)} limit.`)
      yield chunk
    }
  } catch (err) {
    if (err instanceof RunnerError) throw err
    throw rejected(`reading the download failed: ${(err as Error).message}`)
  }
}

function mb(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${bytes / 1024 ** 3} GB` : `${bytes / 1024 ** 2} MB`
}
