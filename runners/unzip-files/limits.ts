import { rejected, type RunnerError } from '../common/runner-error.js'

/**
 * What unzip-files accepts (docs/api.md, Utilities; docs/adr/0002). Every limit
 * is checked from the central directory before a byte is extracted, and again while streaming
 * (yauzl validates each entry's real size against its declared size).
 */
export const UNZIP_LIMITS = {
  /** The archive itself (it is spooled to scratch disk, which is sized for it). */
  maxArchiveBytes: 1024 ** 3,
  /** Entries in the central directory, folders included; also bounds the job's result size. */
  maxEntries: 1000,
  /** Sum of the declared uncompressed sizes. */
  maxTotalBytes: 2 * 1024 ** 3,
  /** Uncompressed size over compressed size, for entries larger than `ratioFloorBytes`. */
  maxRatio: 100,
  ratioFloorBytes: 1024 ** 2,
  /** An entry path, in characters (the storage key and the result carry it). */
  maxPathLength: 255,
  /** One segment of a path (a file or folder name), in UTF-8 bytes: what storage keeps as a name on disk. */
  maxSegmentBytes: 255,
} as const

export type UnzipLimits = { [K in keyof typeof UNZIP_LIMITS]: number }

/** An entry as the central directory describes it. */
export interface EntryInfo {
  path: string
  compressedSize: number
  uncompressedSize: number
  compressionMethod: number
  /** General purpose bit flag (bit 0: encrypted). */
  flags: number
  versionMadeBy: number
  externalFileAttributes: number
  localHeaderOffset: number
}

export const isFolder = (e: EntryInfo) => e.path.endsWith('/')

function isSymlink(e: EntryInfo): boolean {
  const madeByUnix = e.versionMadeBy >> 8 === 3
  return madeByUnix && ((e.externalFileAttributes >>> 16) & 0o170000) === 0o120000
}

/** Why an entry path could escape or confuse the output (zip slip), or null. */
export function pathProblem(
  path: string,
  maxLength: number = UNZIP_LIMITS.maxPathLength,
  maxSegmentBytes: number = UNZIP_LIMITS.maxSegmentBytes,
): string | null {
  if (path.length === 0) return 'an empty path'
  if (path.length > maxLength) return `a path longer than ${maxLength} characters`
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'control characters'
  if (path.includes('\\')) return 'a backslash'
  if (path.startsWith('/')) return 'an absolute path'
  if (/^[a-zA-Z]:/.test(path)) return 'a drive letter'
  const segments = (path.endsWith('/') ? path.slice(0, -1) : path).split('/')
  if (segments.includes('..')) return 'a ".." segment'
  if (segments.includes('.')) return 'a "." segment'
  if (segments.includes('')) return 'an empty segment'
  if (segments.some((seg) => Buffer.byteLength(seg) > maxSegmentBytes))
    return `a file or folder name longer than ${maxSegmentBytes} bytes`
  return null
}

const refuse = (why: string): RunnerError => rejected(`The zip archive is refused: ${why}.`)
const quote = (p: string) => JSON.stringify(p.length > 120 ? `${p.slice(0, 120)}…` : p)

/**
 * Checks the whole central directory before anything is extracted: entry count, zip slip
 * (paths, symlinks), encryption, compression methods, declared sizes, compression ratio, and
 * overlapping entries (the non-recursive "overlapping files" zip bomb). Throws the first problem
 * as upstream_rejected, naming the limit.
 */
export function checkEntries(entries: EntryInfo[], archiveBytes: number, limits: UnzipLimits = UNZIP_LIMITS): void {
  if (entries.length > limits.maxEntries)
    throw refuse(`it has ${entries.length} entries; at most ${limits.maxEntries} are allowed`)
  const seen = new Set<string>()
  let total = 0
  for (const e of entries) {
    const problem = pathProblem(e.path, limits.maxPathLength, limits.maxSegmentBytes)
    if (problem) throw refuse(`the entry ${quote(e.path)} has ${problem} (unsafe path)`)
    if (isSymlink(e)) throw refuse(`the entry ${quote(e.path)} is a symbolic link`)
    if (seen.has(e.path)) throw refuse(`the entry ${quote(e.path)} appears twice`)
    seen.add(e.path)
    if (isFolder(e)) continue
    if (e.flags & 0x1) throw refuse(`the entry ${quote(e.path)} is password-protected (encrypted)`)
    if (e.compressionMethod !== 0 && e.compressionMethod !== 8)
      throw refuse(
        `the entry ${quote(e.path)} uses compression method ${e.compressionMethod}; only stored and deflated entries are supported`,
      )
    if (e.compressedSize > archiveBytes) throw refuse(`the entry ${quote(e.path)} claims to be larger than the archive`)
    total += e.uncompressedSize
    if (total > limits.maxTotalBytes)
      throw refuse(`its entries expand to more than ${gb(limits.maxTotalBytes)} in total (zip bomb limit)`)
    if (e.uncompressedSize > limits.ratioFloorBytes && e.uncompressedSize > e.compressedSize * limits.maxRatio) {
      throw refuse(
        `the entry ${quote(e.path)} expands more than ${limits.maxRatio} times (compression ratio limit, zip bomb)`,
      )
    }
  }
  // Entries whose data overlap let a small archive expand without bound (overlapping-files bomb).
  const byOffset = entries
    .filter((e) => !isFolder(e) || e.compressedSize > 0)
    .sort((a, b) => a.localHeaderOffset - b.localHeaderOffset)
  for (let i = 1; i < byOffset.length; i++) {
    const prev = byOffset[i - 1]
    // 30 bytes: the fixed part of a local file header, which precedes every entry's data.
    if (byOffset[i].localHeaderOffset < prev.localHeaderOffset + 30 + prev.compressedSize) {
      throw refuse(`the entries ${quote(prev.path)} and ${quote(byOffset[i].path)} overlap (zip bomb)`)
    }
  }
}

function gb(bytes: number): string {
  return `${bytes / 1024 ** 3} GB`
}

const TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  zip: 'application/zip',
  txt: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  md: 'text/markdown',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  mp4: 'video/mp4',
  mp3: 'audio/mpeg',
  gz: 'application/gzip',
  tar: 'application/x-tar',
}

/** Content type of an extracted file, from its extension. */
export function contentTypeOf(path: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase()
  return (ext && TYPES[ext]) || 'application/octet-stream'
}
