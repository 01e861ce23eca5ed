import { PDFDocument } from 'pdf-lib'
import { rejected } from '../common/runner-error.js'
import { DecodeLimitError } from '../common/pdf-decode-guard.js'
import { bombMessage, loadPdf } from '../common/pdf-load.js'

const SPLIT = { verb: 'split' }

/** Loads a PDF for splitting, refusing encrypted, invalid and over-long documents. */
export function loadSplittable(bytes: Uint8Array, maxPages: number): Promise<PDFDocument> {
  return loadPdf(bytes, maxPages, SPLIT)
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
      if (err instanceof DecodeLimitError) throw rejected(bombMessage(err.limitBytes, SPLIT))
      throw err
    }
    yield { pageNumber: i + 1, bytes }
  }
}
