import { EncryptedPDFError, PDFDocument } from 'pdf-lib'
import { rejected } from './runner-error.js'
import { DecodeLimitError, type DecodeGuard, installDecodeGuard } from './pdf-decode-guard.js'

let guard: DecodeGuard | undefined

/** The decompression cap, installed once per process (the PDF runners parse one document at a time). */
function decodeGuard(): DecodeGuard {
  guard ??= installDecodeGuard()
  return guard
}

/** What the runner does with the PDF, for messages: "split", "merged". */
export interface PdfAction {
  /** "it cannot be <verb>". */
  verb: string
}

export function bombMessage(limit: number, action: PdfAction): string {
  return `The PDF contains compressed data that expands past the ${Math.round(limit / 1024 ** 2)} MB limit (a decompression bomb?); it cannot be ${action.verb}.`
}

function declaresEncryption(bytes: Uint8Array): boolean {
  return /\/Encrypt\s*(\d+\s+\d+\s+R|<<)/.test(Buffer.from(bytes).toString('latin1'))
}

/**
 * Loads a PDF, refusing (upstream_rejected) what is not one, encrypted documents, documents
 * without pages or with more than `maxPages`, and compressed data that expands past the decode
 * guard's caps.
 */
export async function loadPdf(bytes: Uint8Array, maxPages: number, action: PdfAction): Promise<PDFDocument> {
  if (bytes.length < 5 || Buffer.from(bytes.subarray(0, 1024)).indexOf('%PDF-') < 0) {
    throw rejected('The file is not a valid PDF.')
  }
  const encrypted = `The PDF is password-protected (encrypted); it cannot be ${action.verb}.`
  const g = decodeGuard()
  g.reset()
  let doc: PDFDocument
  try {
    doc = await PDFDocument.load(bytes, { updateMetadata: false })
  } catch (err) {
    if (err instanceof DecodeLimitError || g.tripped !== null)
      throw rejected(bombMessage(g.tripped ?? (err as DecodeLimitError).limitBytes, action))
    // pdf-lib cannot parse some encrypted files at all (encrypted object streams), so a
    // failed parse of a file whose trailer names an /Encrypt dictionary is reported as such.
    if (err instanceof EncryptedPDFError || declaresEncryption(bytes)) throw rejected(encrypted)
    throw rejected('The file is not a valid PDF.')
  }
  // pdf-lib's lenient parser skips objects it fails to read, so a tripped cap may not surface.
  if (g.tripped !== null) throw rejected(bombMessage(g.tripped, action))
  if (doc.isEncrypted) throw rejected(encrypted)
  const pages = doc.getPageCount()
  if (pages === 0) throw rejected('The PDF has no pages.')
  if (pages > maxPages) throw rejected(`The PDF has ${pages} pages; at most ${maxPages} can be ${action.verb}.`)
  return doc
}
