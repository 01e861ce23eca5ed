import { describe, expect, it } from 'vitest'
import { checkEntries, contentTypeOf, type EntryInfo, pathProblem, UNZIP_LIMITS, type UnzipLimits } from './limits.js'

let offset = 0
const entry = (path: string, over: Partial<EntryInfo> = {}): EntryInfo => {
  const e: EntryInfo = {
    path,
    compressedSize: 100,
    uncompressedSize: 300,
    compressionMethod: 8,
    flags: 0,
    versionMadeBy: 20,
    externalFileAttributes: 0,
    localHeaderOffset: offset,
    ...over,
  }
  offset += 1000
  return e
}
const check =
  (entries: EntryInfo[], limits: UnzipLimits = UNZIP_LIMITS) =>
  () =>
    checkEntries(entries, 10 ** 9, limits)

describe('pathProblem (zip slip)', () => {
  it.each([
    ['../evil', '".." segment'],
    ['a/../../evil', '".." segment'],
    ['/etc/passwd', 'absolute path'],
    ['C:/Windows/evil.dll', 'drive letter'],
    ['c:evil', 'drive letter'],
    ['..\\evil', 'backslash'],
    ['a/./b', '"." segment'],
    ['a//b', 'empty segment'],
    ['a\u0000b', 'control characters'],
    ['x'.repeat(256), 'longer than 255'],
    [`d/${'é'.repeat(128)}.txt`, 'name longer than 255 bytes'],
  ])('refuses %j (%s)', (path, why) => {
    expect(pathProblem(path)).toContain(why)
  })

  it.each([
    `${'é'.repeat(127)}/${'é'.repeat(120)}.txt`,
    'a.txt',
    'docs/2024/report.pdf',
    'folder/',
    'names with spaces/ünïcode.txt',
    '..hidden',
    'a..b',
  ])('accepts %j', (path) => {
    expect(pathProblem(path)).toBeNull()
  })
})

describe('checkEntries', () => {
  it('accepts an ordinary archive', () => {
    expect(
      check([entry('a/'), entry('a/b.txt'), entry('c.pdf', { compressionMethod: 0, compressedSize: 300 })]),
    ).not.toThrow()
  })

  it('refuses more entries than the limit, saying which limit', () => {
    expect(check([entry('a'), entry('b'), entry('c')], { ...UNZIP_LIMITS, maxEntries: 2 })).toThrow(
      'it has 3 entries; at most 2 are allowed',
    )
  })

  it('refuses symlinks made on Unix', () => {
    expect(check([entry('link', { versionMadeBy: (3 << 8) | 20, externalFileAttributes: 0o120777 << 16 })])).toThrow(
      'is a symbolic link',
    )
    // The same attribute bits from a DOS/Windows host mean nothing.
    expect(check([entry('plain', { versionMadeBy: 20, externalFileAttributes: 0o120777 << 16 })])).not.toThrow()
  })

  it('refuses encrypted entries, unknown methods and duplicates', () => {
    expect(check([entry('secret.txt', { flags: 1 })])).toThrow('password-protected')
    expect(check([entry('a.bz2', { compressionMethod: 12 })])).toThrow('compression method 12')
    expect(check([entry('a.txt'), entry('a.txt')])).toThrow('appears twice')
  })

  it('refuses a declared total over the limit (zip bomb)', () => {
    const limits = { ...UNZIP_LIMITS, maxTotalBytes: 500 }
    expect(check([entry('a'), entry('b')], limits)).toThrow('expand to more than')
  })

  it('refuses an entry whose compression ratio passes the limit, above the floor size', () => {
    const big = 200 * 1024 ** 2
    expect(check([entry('zeros', { uncompressedSize: big, compressedSize: big / 1000 })])).toThrow(
      'expands more than 100 times (compression ratio limit',
    )
    // Small highly compressible files are fine.
    expect(check([entry('tiny', { uncompressedSize: 1024 * 1024, compressedSize: 1024 })])).not.toThrow()
  })

  it('refuses entries whose data overlap (overlapping-files bomb)', () => {
    const a = entry('a', { localHeaderOffset: 0, compressedSize: 5000 })
    const b = entry('b', { localHeaderOffset: 0, compressedSize: 5000 })
    expect(check([a, b])).toThrow('overlap (zip bomb)')
    const c = entry('c', { localHeaderOffset: 4000, compressedSize: 5000 })
    expect(check([a, c])).toThrow('overlap')
  })
})

describe('contentTypeOf', () => {
  it('maps extensions, defaulting to octet-stream', () => {
    expect(contentTypeOf('a/B.PDF')).toBe('application/pdf')
    expect(contentTypeOf('inner.zip')).toBe('application/zip')
    expect(contentTypeOf('Makefile')).toBe('application/octet-stream')
  })
})
