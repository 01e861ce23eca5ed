import yauzl from 'yauzl'
import { CfbError, readCfbStream } from '../common/cfb-reader.js'
import { rejected } from '../common/runner-error.js'
import { filePassRecord, wordEncrypted } from './legacy-encryption.js'

/**
 * What an office document is, told by its content: a zip of OOXML or OpenDocument parts, a
 * Compound File (legacy Word, Excel, PowerPoint), RTF, or flat OpenDocument XML. Plain text is
 * the one kind its content cannot tell apart (prose or a table?): it is taken only when its name
 * says which, `.txt` or `.csv`. Anything else is refused before LibreOffice sees it, and so is a
 * document protected by a password when none was given (a protected docx, xlsx, pptx or
 * OpenDocument file is decrypted before it comes here; a protected doc or xls file is opened by
 * LibreOffice with the password; a protected ppt file is refused).
 */
export type OfficeFormat =
  | 'docx'
  | 'xlsx'
  | 'pptx'
  | 'odt'
  | 'ods'
  | 'odp'
  | 'doc'
  | 'xls'
  | 'ppt'
  | 'rtf'
  | 'fodt'
  | 'fods'
  | 'fodp'
  | 'txt'
  | 'csv'

export const ACCEPTED_FORMATS =
  'docx, doc, odt, fodt, rtf, txt, xlsx, xls, ods, fods, csv, pptx, ppt, odp or fodp; text only named .txt or .csv'

const NOT_OFFICE = `The file is not an office document this utility converts (${ACCEPTED_FORMATS}).`
export const DAMAGED_DOCUMENT = 'The document could not be opened: it is damaged, or protected by a password.'
const DAMAGED_EMBEDDED = 'The document is refused: a package embedded in it is damaged.'
/**
 * A protected document without its password (with it, the handler decrypts a docx, xlsx, pptx or
 * OpenDocument file first: ooxml-encryption.ts, odf-encryption.ts; LibreOffice opens a doc or
 * xls file with it).
 */
export const PASSWORD_NEEDED = 'The document is protected by a password: send its password as `password`.'
/** A protected PowerPoint 97–2003 file: LibreOffice does not open one, with its password or without. */
export const PROTECTED_PPT =
  'The presentation is protected by a password; dutil does not open a protected ppt file (save it as pptx with its password, which dutil opens).'

const CFB_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])
const ZIP_MAGIC = Buffer.from('PK\x03\x04', 'latin1')
/** Entries a document's zip may have before it is refused unread (an OOXML file has tens). */
export const MAX_ZIP_ENTRIES = 10_000
/** The OpenDocument manifest is read whole to see whether the document is encrypted. */
const MAX_MANIFEST_BYTES = 1024 * 1024
/**
 * What a document's parts may expand to, in all: more than LibreOffice could hold in the pod's
 * memory (a text's or a sheet's XML takes several times its size once loaded).
 */
export const MAX_EXPANDED_BYTES = 1024 ** 3
/** Uncompressed over compressed size of one part larger than MIN_RATIO_CHECK_BYTES: only runs of one byte reach it. */
export const MAX_PART_RATIO = 1000
const MIN_RATIO_CHECK_BYTES = 1024 ** 2

const ODF_TYPES: Record<string, OfficeFormat> = {
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.text-template': 'odt',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/vnd.oasis.opendocument.spreadsheet-template': 'ods',
  'application/vnd.oasis.opendocument.presentation': 'odp',
  'application/vnd.oasis.opendocument.presentation-template': 'odp',
}

/** The main part of each OOXML kind (macro-enabled and template variants have the same parts). */
const OOXML_PARTS: Array<[string, OfficeFormat]> = [
  ['word/document.xml', 'docx'],
  ['xl/workbook.xml', 'xlsx'],
  ['xl/workbook.bin', 'xlsx'],
  ['ppt/presentation.xml', 'pptx'],
]

/** Flat OpenDocument's root element names its kind (ODF 1.2 part 1, 2.2.1: `office:mimetype`). */
const FLAT_ODF_TYPES: Record<string, OfficeFormat> = {
  'application/vnd.oasis.opendocument.text': 'fodt',
  'application/vnd.oasis.opendocument.spreadsheet': 'fods',
  'application/vnd.oasis.opendocument.presentation': 'fodp',
}
/** The root element of a flat OpenDocument file is within its first bytes (after the XML declaration and comments). */
const FLAT_ODF_HEAD_BYTES = 64 * 1024
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf])

/**
 * The document's format; `name` is its file name (the upload's, or the last segment of its URL),
 * which only plain text needs.
 */
export async function detectOffice(file: Buffer, name = '', passwordGiven = false): Promise<OfficeFormat> {
  const head = file.subarray(0, 8)
  if (head.equals(CFB_MAGIC)) {
    const format = detectCompound(file, passwordGiven)
    await checkNested(file, newBudget(), 1)
    return format
  }
  if (head.subarray(0, 4).equals(ZIP_MAGIC)) return detectZip(file)
  if (file.subarray(0, 5).toString('latin1') === '{\\rtf') {
    await checkRtfObjects(file, newBudget())
    return 'rtf'
  }
  const text = file.subarray(0, 3).equals(UTF8_BOM) ? file.subarray(3) : file
  const start = text.subarray(0, FLAT_ODF_HEAD_BYTES).toString('latin1').trimStart()
  if (start.startsWith('<')) return detectFlatOdf(file, start)
  const extension = /\.(txt|csv)$/i.exec(name)?.[1].toLowerCase()
  if (extension && isText(text)) return extension as 'txt' | 'csv'
  throw rejected(NOT_OFFICE)
}

/**
 * A flat OpenDocument file: XML whose root is `office:document` with the kind's MIME type. One
 * that declares a DTD (where entities are declared: the billion laughs, external entities) is
 * refused, as is XML of any other kind (an HTML page goes to html-pdf).
 */
function detectFlatOdf(file: Buffer, start: string): OfficeFormat {
  const prolog = start.replace(/<\?[^]*?\?>|<!--[^]*?-->/g, '')
  const at = prolog.indexOf('<office:document')
  const before = at < 0 ? '' : prolog.slice(0, at).trim()
  if (at < 0 || (before !== '' && !before.startsWith('<!DOCTYPE'))) throw rejected(NOT_OFFICE)
  const root = /^<office:document(?=[\s>/])[^>]*>/.exec(prolog.slice(at))
  const format = root && FLAT_ODF_TYPES[/\soffice:mimetype="([^"]*)"/.exec(root[0])?.[1] ?? '']
  if (!format) throw rejected(NOT_OFFICE)
  if (file.includes('<!DOCTYPE') || file.includes('<!ENTITY'))
    throw rejected('The document is refused: its XML declares a DTD (entities), which no OpenDocument file needs.')
  return format
}

/** Whether the bytes are UTF-8 text (no NUL, no invalid sequence), as a text or CSV file is. */
function isText(bytes: Buffer): boolean {
  if (bytes.length === 0 || bytes.includes(0)) return false
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return true
  } catch {
    return false
  }
}

/**
 * How much a document may still expand to: shared by its own parts and every package nested in
 * it (an embedded spreadsheet, an OLE object's package), so nesting never multiplies the limit.
 */
interface Budget {
  expanded: number
}
const newBudget = (): Budget => ({ expanded: 0 })

/** Packages nest at most this deep (a document in an OLE object in a document …). */
export const MAX_NESTING = 3
/** A nested package is read into memory to be checked: at most the size of a whole document. */
export const MAX_NESTED_BYTES = 100 * 1024 ** 2

/** Whether `data` is a package LibreOffice may open when it renders an embedded object. */
const isPackage = (data: Buffer) => data.subarray(0, 8).equals(CFB_MAGIC) || data.subarray(0, 4).equals(ZIP_MAGIC)

/**
 * A package nested in a document (an OLE object's Compound File, an embedded OOXML or OpenDocument
 * zip) is held to the same limits as the document, within the document's own budget: its zip
 * parts checked as the document's are, the package inside a Compound File's `Package` stream too.
 */
async function checkNested(data: Buffer, budget: Budget, depth: number): Promise<void> {
  if (depth > MAX_NESTING) throw expansionRefused(`it nests embedded packages more than ${MAX_NESTING} deep`)
  if (data.subarray(0, 4).equals(ZIP_MAGIC)) {
    await zipParts(data, budget, depth).catch((err: unknown) => {
      throw err instanceof Error && err.message === NOT_OFFICE ? rejected(DAMAGED_EMBEDDED) : err
    })
    return
  }
  if (!data.subarray(0, 8).equals(CFB_MAGIC)) return
  let inner: Buffer | null
  try {
    inner = readCfbStream(data, 'Package')
  } catch (err) {
    if (err instanceof CfbError) throw rejected(DAMAGED_DOCUMENT)
    throw err
  }
  if (inner) {
    budget.expanded += inner.length
    if (budget.expanded > MAX_EXPANDED_BYTES)
      throw expansionRefused(`its parts expand to more than ${MAX_EXPANDED_BYTES / 1024 ** 3} GiB`)
    await checkNested(inner, budget, depth + 1)
  }
}

/**
 * An RTF document's embedded objects (`\\objdata`, the OLE object as hex digits): each decoded,
 * and a package in it checked like a nested one. The hex of one object is at most the document,
 * so decoding stays within its size.
 */
async function checkRtfObjects(file: Buffer, budget: Budget): Promise<void> {
  const text = file.toString('latin1')
  const marker = /\\objdata\b/g
  for (let m = marker.exec(text); m; m = marker.exec(text)) {
    let end = m.index + m[0].length
    while (end < text.length && text[end] !== '}') end++
    const hex = text.slice(m.index + m[0].length, end).replace(/[^0-9a-fA-F]/g, '')
    const data = Buffer.from(hex.length % 2 ? hex.slice(0, -1) : hex, 'hex')
    // An OLE1 object: a header (version, format, class name, …), then its native data.
    for (const magic of [CFB_MAGIC, ZIP_MAGIC]) {
      const at = data.indexOf(magic)
      if (at >= 0) await checkNested(data.subarray(at), budget, 1)
    }
    marker.lastIndex = end
  }
}

/** A stream of the file's root storage, or null: a Compound File the reader cannot read is no office document. */
function stream(file: Buffer, name: string): Buffer | null {
  try {
    return readCfbStream(file, name)
  } catch (err) {
    if (err instanceof CfbError) throw rejected(NOT_OFFICE)
    throw err
  }
}

/**
 * A Compound File's format. A protected Word or Excel 97–2003 file keeps its container and its
 * streams' names and sizes in the clear (MS-OFFCRYPTO encrypts what the streams hold), so what is
 * checked of an unprotected one (the container, a package at its root) is checked of it too;
 * without a password it is refused asking for one.
 */
function detectCompound(file: Buffer, passwordGiven: boolean): OfficeFormat {
  // An encrypted OOXML document is a Compound File holding the encrypted package (MS-OFFCRYPTO).
  if (stream(file, 'EncryptedPackage')) throw rejected(PASSWORD_NEEDED)
  const needsPassword = (encrypted: boolean) => {
    if (encrypted && !passwordGiven) throw rejected(PASSWORD_NEEDED)
  }
  const word = stream(file, 'WordDocument')
  if (word) {
    needsPassword(wordEncrypted(word))
    return 'doc'
  }
  const book = stream(file, 'Workbook') ?? stream(file, 'Book')
  if (book) {
    needsPassword(filePassRecord(book) !== null)
    return 'xls'
  }
  if (stream(file, 'PowerPoint Document')) {
    if (stream(file, 'EncryptedSummary')) throw rejected(PROTECTED_PPT)
    return 'ppt'
  }
  throw rejected(NOT_OFFICE)
}

async function detectZip(file: Buffer): Promise<OfficeFormat> {
  // An OpenDocument file starts with its stored `mimetype` entry (ODF 1.2 part 3, 3.3).
  if (file.length > 38 && file.toString('latin1', 30, 38) === 'mimetype') {
    const end = file.indexOf('PK', 38, 'latin1')
    const type = file.toString('latin1', 38, end < 0 ? Math.min(file.length, 38 + 100) : Math.min(end, 38 + 100))
    const format = ODF_TYPES[type]
    if (format) {
      const manifest = await readZipEntry(file, 'META-INF/manifest.xml', MAX_MANIFEST_BYTES)
      if (manifest?.includes('encryption-data')) throw rejected(PASSWORD_NEEDED)
      await zipParts(file)
      return format
    }
  }
  const names = await zipParts(file)
  for (const [part, format] of OOXML_PARTS) if (names.has(part)) return format
  throw rejected(NOT_OFFICE)
}

/** The zip, its central directory not yet read; refused past MAX_ZIP_ENTRIES entries. */
async function openZip(file: Buffer): Promise<yauzl.ZipFile> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    yauzl.fromBuffer(file, { lazyEntries: true, validateEntrySizes: true }, (err, z) =>
      err || !z ? reject(rejected(NOT_OFFICE)) : resolve(z),
    )
  })
  if (zip.entryCount > MAX_ZIP_ENTRIES) {
    zip.close()
    throw rejected(`The document is refused: its zip container has ${zip.entryCount} entries.`)
  }
  return zip
}

const expansionRefused = (why: string) =>
  rejected(`The document is refused: ${why} (a limit against decompression bombs).`)

/**
 * The names of a document zip's parts, each part inflated once to check it: no part expands past
 * the size its directory entry declares (what LibreOffice will read), nor far past its compressed
 * size, and all of them stay within MAX_EXPANDED_BYTES.
 */
async function zipParts(file: Buffer, budget: Budget = newBudget(), depth = 0): Promise<Set<string>> {
  const zip = await openZip(file)
  return new Promise<Set<string>>((resolve, reject) => {
    const names = new Set<string>()
    let failed = false
    const fail = (err: Error) => {
      if (failed) return
      failed = true
      zip.close()
      reject(err)
    }
    zip.on('entry', (e: yauzl.Entry) => {
      names.add(e.fileName)
      budget.expanded += e.uncompressedSize
      if (budget.expanded > MAX_EXPANDED_BYTES)
        return fail(expansionRefused(`its parts expand to more than ${MAX_EXPANDED_BYTES / 1024 ** 3} GiB`))
      if (e.uncompressedSize > MIN_RATIO_CHECK_BYTES && e.uncompressedSize > e.compressedSize * MAX_PART_RATIO)
        return fail(expansionRefused(`its part ${e.fileName} expands more than ${MAX_PART_RATIO} times`))
      if (e.fileName.endsWith('/')) return zip.readEntry()
      // yauzl (validateEntrySizes) fails a stream that inflates past its declared size.
      zip.openReadStream(e, (err, s) => {
        if (err || !s) return fail(rejected(DAMAGED_DOCUMENT))
        // A part that is itself a package is kept (within a bound) to be checked once the zip is read.
        const kept: Buffer[] = []
        let seen = 0
        let keep: boolean | undefined
        s.on('data', (chunk: Buffer) => {
          if (keep === false) return
          kept.push(chunk)
          seen += chunk.length
          if (keep === undefined && seen >= CFB_MAGIC.length) {
            keep = isPackage(Buffer.concat(kept))
            if (!keep) kept.length = 0
            else if (e.uncompressedSize > MAX_NESTED_BYTES) {
              s.destroy()
              fail(
                expansionRefused(
                  `its embedded package ${e.fileName} is larger than ${MAX_NESTED_BYTES / 1024 ** 2} MB`,
                ),
              )
            }
          }
        })
        s.on('end', () => {
          // Checked before the next part is read: one nested package in memory at a time.
          if (keep) checkNested(Buffer.concat(kept), budget, depth + 1).then(() => zip.readEntry(), fail)
          else zip.readEntry()
        })
        s.on('error', (err: Error) =>
          fail(
            // yauzl's words for a part longer than declared; anything else is a broken part.
            /^too many bytes/.test(err.message)
              ? expansionRefused(`its part ${e.fileName} expands past the size its zip directory declares`)
              : rejected(DAMAGED_DOCUMENT),
          ),
        )
      })
    })
    zip.on('end', () => resolve(names))
    zip.on('error', () => fail(rejected(NOT_OFFICE)))
    zip.readEntry()
  })
}

/** One entry's text, read within `maxBytes`, or null when the zip has none of that name. */
async function readZipEntry(file: Buffer, name: string, maxBytes: number): Promise<string | null> {
  const zip = await openZip(file)
  return new Promise((resolve, reject) => {
    const fail = () => reject(rejected(NOT_OFFICE))
    zip.on('entry', (e: yauzl.Entry) => {
      if (e.fileName !== name) return zip.readEntry()
      if (e.uncompressedSize > maxBytes) return reject(rejected(`The document is refused: its ${name} is too large.`))
      zip.openReadStream(e, (err, s) => {
        if (err || !s) return fail()
        const chunks: Buffer[] = []
        s.on('data', (c: Buffer) => chunks.push(c))
        s.on('end', () => {
          zip.close()
          resolve(Buffer.concat(chunks).toString('utf8'))
        })
        s.on('error', fail)
      })
    })
    zip.on('end', () => resolve(null))
    zip.on('error', fail)
    zip.readEntry()
  })
}
