import { PDFDocument } from 'pdf-lib'
import { rejected } from '../common/runner-error.js'
import { DecodeLimitError } from '../common/pdf-decode-guard.js'
import { bombMessage, loadPdf } from '../common/pdf-load.js'

const SPLIT = { verb: 'split' }

/** Loads a PDF for splitting, refusing encrypted, invalid and over-long documents. */
export function loadSplittable(bytes: Uint8Array, maxPages: number): Promise<PDFDocument> {
  return loadPdf(bytes, maxPages, SPLIT)
}

/**
 * Yields one PDF per group of pages (1-based numbers; groups/pageGroups), in order: by default
 * one single-page PDF per page.
 */
export async function* splitPages(
  doc: PDFDocument,
  groups: readonly number[][] = Array.from({ length: doc.getPageCount() }, (_, i) => [i + 1]),
): AsyncGenerator<{ pages: number[]; bytes: Uint8Array }> {
  for (const pages of groups) {
    const out = await PDFDocument.create({ updateMetadata: false })
    for (const page of await out.copyPages(
      doc,
      pages.map((p) => p - 1),
    ))
      out.addPage(page)
    let bytes: Uint8Array
    try {
      bytes = await out.save({ useObjectStreams: false })
    } catch (err) {
      if (err instanceof DecodeLimitError) throw rejected(bombMessage(err.limitBytes, SPLIT))
      throw err
    }
    yield { pages, bytes }
  }
}
