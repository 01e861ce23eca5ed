import { rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { DocumentInfo } from '../common/document-info-schema.js'
import { documentInfoOf, infoRefOf, objectValueOf, rootRefOf, textOf } from '../common/pdf-facts.js'
import { rejected } from '../common/runner-error.js'
import { infoUpdate, qpdfArgs, rewrittenInfoUpdate, type EditFiles, type EditPdfInput } from './edit.js'
import { ghostscriptArgs, pdfaDefinition, runGhostscript } from './ghostscript.js'

/** The PostScript of a PDF/A rewrite: the same for every job, built once. */
let definition: string | undefined

/** The keys of the files a document embeds, from `qpdf --json=2 --json-key=attachments`. */
export function attachmentKeysOf(report: unknown): string[] {
  const a = (report as { attachments?: unknown }).attachments
  return a && typeof a === 'object' && !Array.isArray(a) ? Object.keys(a) : []
}

/** What a rewrite needs of the edit around it. */
export interface RewriteStep {
  input: EditPdfInput
  pageCount: number
  /** The document Ghostscript rewrites (the input, or the output of the edits before it). */
  source: string
  /** Where the edited document ends. */
  output: string
  work: string
  /** The original document's Info dictionary, as qpdf's JSON writes it. */
  original: Record<string, unknown> | undefined
  encryptArgs: EditFiles['encryptArgs']
  timeoutMs: number
  describe: (file: string, args: string[]) => Promise<unknown>
  qpdf: (args: string[]) => Promise<unknown>
}

/**
 * Ghostscript's rewrite (pdfa, imageQuality, maxImageResolution), then qpdf's edits of the file
 * (information, compression, linearization, protection) on what it wrote. Ghostscript writes its
 * own document information and metadata: the document's own are written back after it (for a
 * PDF/A document whole, Info dictionary and XMP alike). Answers the edited document's information.
 */
export async function rewriteAndFinish(s: RewriteStep): Promise<DocumentInfo> {
  const { input, work } = s
  const rewritten = join(work, 'rewritten.pdf')
  let pdfaFile: string | undefined
  if (input.pdfa) {
    pdfaFile = join(work, 'pdfa.ps')
    await writeFile(pdfaFile, (definition ??= pdfaDefinition()))
  }
  await runGhostscript(
    ghostscriptArgs(input, { input: s.source, output: rewritten, ...(pdfaFile ? { pdfaDefinition: pdfaFile } : {}) }),
    { cwd: work, timeoutMs: s.timeoutMs },
  )
  // What Ghostscript wrote: its trailer, then its Info dictionary and (for PDF/A) its catalog.
  const r = (await s.describe(rewritten, ['--json-key=qpdf', '--json-object=trailer'])) as {
    qpdf?: [{ maxobjectid?: number }, { trailer?: { value?: Record<string, unknown> } }]
  }
  const trailer = r.qpdf?.[1]?.trailer?.value
  const maxObjectId = r.qpdf?.[0]?.maxobjectid
  if (!trailer || typeof maxObjectId !== 'number') throw rejected('Ghostscript wrote a PDF without a trailer.')
  const infoRef = infoRefOf(trailer)
  const rootRef = input.pdfa ? rootRefOf(trailer) : undefined
  const refs = [infoRef, rootRef].filter((x): x is string => x !== undefined)
  const objects = refs.length
    ? await s.describe(rewritten, ['--json-key=qpdf', ...refs.map((x) => `--json-object=${x}`)])
    : undefined
  const written = infoRef ? objectValueOf(objects, infoRef) : undefined
  const now = new Date()
  let info: DocumentInfo
  let update: object | undefined
  if (input.pdfa) {
    const catalog = rootRef ? objectValueOf(objects, rootRef) : undefined
    if (!rootRef || !catalog) throw rejected('Ghostscript wrote a PDF without a document catalog.')
    // The document's own information (Ghostscript's PDF/A leaves out what PDFDocEncoding cannot
    // hold), its producer now Ghostscript unless the edit names one.
    const producer = documentInfoOf(written).producer
    info = { ...documentInfoOf(s.original), ...(producer ? { producer } : {}), ...input.info }
    const xmpFile = 'metadata.xmp'
    const made = rewrittenInfoUpdate(
      { trailer, maxObjectId },
      {
        info,
        created: textOf(s.original?.['/CreationDate']),
        now,
        pdfa: { level: input.pdfa, catalog: { ref: rootRef, value: catalog }, xmpFile },
      },
    )
    await writeFile(join(work, xmpFile), made.xmp!)
    update = made.update
  } else {
    info = { ...documentInfoOf(written), ...input.info }
    if (input.info) update = infoUpdate({ trailer, maxObjectId }, written, input.info, now)
  }
  const files: EditFiles = { input: rewritten, output: s.output }
  if (update) {
    files.infoUpdate = join(work, 'rewritten-update.json')
    await writeFile(files.infoUpdate, JSON.stringify(update))
  }
  if (s.encryptArgs) files.encryptArgs = s.encryptArgs
  if (update || input.compress || input.linearize || s.encryptArgs)
    await s.qpdf(qpdfArgs(input, s.pageCount, files, 'after'))
  else await rename(rewritten, s.output)
  return info
}
