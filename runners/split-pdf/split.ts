import { EncryptedPDFError, PDFDocument } from 'pdf-lib'
import { rejected } from '../common/runner-error.js'

const ENCRYPTED = 'The PDF is password-protected (encrypted); it cannot be split.'

function declaresEncryption(bytes: Uint8Array): boolean {
  return /\/Encrypt\s*(\d+\s+\d+\s+R|<<)/.test(Buffer.from(bytes).toString('latin1'))
}

/** Loads a PDF for splitting, refusing encrypted, invalid and over-long documents. */
export async function loadSplittable(bytes: Uint8Array, maxPages: number): Promise<PDFDocument> {
  if (bytes.length < 5 || Buffer.from(bytes.subarray(0, 1024)).indexOf('%PDF-') < 0) {
    throw rejected('The file is not a valid PDF.')
  }
  let doc: PDFDocument
  try {
    doc = await PDFDocument.load(bytes, { updateMetadata: false })
  } catch (err) {
    // pdf-lib cannot parse some encrypted files at all (encrypted object streams), so a
    // failed parse of a file whose trailer names an /Encrypt dictionary is reported as such.
    if (err instanceof EncryptedPDFError || declaresEncryption(bytes)) throw rejected(ENCRYPTED)
    throw rejected('The file is not a valid PDF.')
  }
  if (doc.isEncrypted) throw rejected(ENCRYPTED)
  const pages = doc.getPageCount()
  if (pages === 0) throw rejected('The PDF has no pages.')
  if (pages > maxPages) throw rejected(`The PDF has ${pages} pages; at most ${maxPages} can be split.`)
  return doc
}

/** File name of page n (1-indexed), zero-padded so names sort in page order. */
export function pageFileName(n: number, total: number): string {
  return `page-${String(n).padStart(Math.max(3, String(total).length), '0')}.pdf`
}

/** Yields one single-page PDF per page, in order. */
export async function* splitPages(doc: PDFDocument): AsyncGenerator<{ pageNumber: number; bytes: Uint8Array }> {
  const total = doc.getPageCount()
  for (let i = 0; i < total; i++) {
    const out = await PDFDocument.create()
    const [page] = await out.copyPages(doc, [i])
    out.addPage(page)
    yield { pageNumber: i + 1, bytes: await out.save() }
  }
}
