import { readFile, rename, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { rejected } from '../common/runner-error.js'
import { qpdfArgs, type EditFiles, type EditPdfInput } from './edit.js'
import { EDIT_PDF_LIMITS } from './limits.js'

/** What an untagged or incomplete PDF lacks for PDF/UA, said as edit-pdf's caller gives it. */
const REFUSALS = {
  field: 'pdfua',
  title: 'the PDF has no title, which an accessible PDF shows: give one in info.title.',
  language:
    "the PDF states no language (its catalog's Lang), which an accessible PDF needs: make it where it is made (html-pdf with <html lang>, office-pdf).",
  structure:
    'the PDF is not tagged (it has no structure tree), and an edit cannot give it one: make it tagged where it is made (html-pdf with tagged, office-pdf with pdfua).',
}

/**
 * A tagged PDF made accessible (PDF/UA-1) after qpdf's edits of its pages and information: its
 * XMP metadata, its title shown, its links described (pdf-lib, common/pdf-identification.ts,
 * loaded only by a job that asks), then qpdf's edits of the file (compression, linearization),
 * which pdf-lib's writing would otherwise undo.
 */
export async function identifyAndFinish(s: {
  input: EditPdfInput
  pageCount: number
  /** The PDF after qpdf's edits of its pages (or the input, when there were none). */
  source: string
  output: string
  work: string
  qpdf: (args: string[]) => Promise<unknown>
}): Promise<void> {
  if ((await stat(s.source)).size > EDIT_PDF_LIMITS.maxAccessibleBytes)
    throw rejected(
      `pdfua: the PDF passes ${EDIT_PDF_LIMITS.maxAccessibleBytes / 1024 ** 2} MB; dutil makes smaller PDFs accessible.`,
    )
  const { archivalPdf } = await import('../common/pdf-identification.js')
  const identified = join(s.work, 'identified.pdf')
  await writeFile(identified, await archivalPdf(await readFile(s.source), { pdfua: true, refusal: REFUSALS }))
  if (s.input.compress || s.input.linearize) {
    const files: EditFiles = { input: identified, output: s.output }
    await s.qpdf(qpdfArgs(s.input, s.pageCount, files, 'after'))
  } else await rename(identified, s.output)
}
