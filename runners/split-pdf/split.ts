import { EncryptedPDFError, PDFDocument } from 'pdf-lib'
import { rejected } from '../common/runner-error.js'
import { DecodeLimitError, type DecodeGuard, installDecodeGuard } from './decode-guard.js'

let guard: DecodeGuard | undefined

/** The decompression cap, installed once per process (a runner splits one document). */
function decodeGuard(): DecodeGuard {
  guard ??= installDecodeGuard()
  return guard
}

function bombMessage(limit: number): string {
  return `The PDF contains compressed data that expands past the ${Math.round(limit / 1024 ** 2)} MB limit (a decompression bomb?); it cannot be split.`
}

const ENCRYPTED = 'The PDF is password-protected (encrypted); it cannot be split.'

function declaresEncryption(bytes: Uint8Array): boolean {
  return /\/Encrypt\s*(\d+\s+\d+\s+R|<<)/.test(Buffer.from(bytes).toString('latin1'))
}

/** Loads a PDF for splitting, refusing encrypted, invalid and over-long documents. */
export async function loadSplittable(bytes: Uint8Array, maxPages: number): Promise<PDFDocument> {
  if (bytes.length < 5 || Buffer.from(bytes.subarray(0, 1024)).indexOf('%PDF-') < 0) {
    throw rejected('The file is not a valid PDF.')
  }
  const g = decodeGuard()
  g.reset()
  let doc: PDFDocument
  try {
    doc = await PDFDocument.load(bytes, { updateMetadata: false })
  } catch (err) {
    if (err instanceof DecodeLimitError || g.tripped !== null)
      throw rejected(bombMessage(g.tripped ?? (err as DecodeLimitError).limitBytes))
    // pdf-lib cannot parse some encrypted files at all (encrypted object streams), so a
    // failed parse of a file whose trailer names an /Encrypt dictionary is reported as such.
    if (err instanceof EncryptedPDFError || declaresEncryption(bytes)) throw rejected(ENCRYPTED)
    throw rejected('The file is not a valid PDF.')
  }
  // pdf-lib's lenient parser skips objects it fails to read, so a tripped cap may not surface.
  if (g.tripped !== null) throw rejected(bombMessage(g.tripped))
  if (doc.isEncrypted) throw rejected(ENCRYPTED)
  const pages = doc.getPageCount()
  if (pages === 0) throw rejected('The PDF has no pages.')
  if (pages > maxPages) throw rejected(`The PDF has ${pages} pages; at most ${maxPages} can be split.`)
  return doc
}

/** Yields one single-page PDF per page, in order. */
export async function* splitPages(doc: PDFDocument): AsyncGenerator<{ pageNumber: number; bytes: Uint8Array }> {
  const total = doc.getPageCount()
  for (let i = 0; i < total; i++) {
    const out = await PDFDocument.create({ updateMetadata: false })
    const [page] = await out.copyPages(doc, [i])
    out.addPage(page)
    let bytes: Uint8Array
    try {
      bytes = await out.save({ useObjectStreams: false })
    } catch (err) {
      if (err instanceof DecodeLimitError) throw rejected(bombMessage(err.limitBytes))
      throw err
    }
    yield { pageNumber: i + 1, bytes }
  }
}
