import { createReadStream } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { outputFileName } from '../common/file-names.js'
import { withSpooledInput } from '../common/read-input.js'
import type { UtilityHandler } from '../common/run-utility.js'
import { rejected } from '../common/runner-error.js'
import { documentInfoOf, infoExtras, infoRefOf, objectValueOf, pdfFactsOf } from '../common/pdf-facts.js'
import { describePdf, runQpdf } from '../common/qpdf.js'
import { infoUpdate, qpdfArgs, type EditPdfInput } from './edit.js'
import { EDIT_PDF_LIMITS } from './limits.js'
import { stampPage } from './stamp.js'

/**
 * edit-pdf: streams the PDF into the job's scratch space, has qpdf describe it (pages,
 * encryption, trailer, Info dictionary), then applies every edit asked for in one qpdf run, and
 * streams the edited PDF, named as the input, to storage. Its result carries its page count and
 * document information.
 */
export const handler: UtilityHandler<EditPdfInput> = async ({ config, input, storage, storeStream }) => {
  const from = {
    storage,
    ...config.outbound,
    maxBytes: EDIT_PDF_LIMITS.maxBytes,
    what: 'PDF',
    scratchDir: config.scratchDir,
    fileName: 'input.pdf',
  }
  return withSpooledInput(input.url, from, async ({ path, dir: work, name: sourceName }) => {
    const files = { input: path, output: join(work, 'output.pdf') }
    const bounds = {
      cwd: work,
      timeoutMs: EDIT_PDF_LIMITS.qpdfTimeoutMs,
      maxOutputBytes: EDIT_PDF_LIMITS.maxReportBytes,
    }
    const qpdf = (args: string[]) => runQpdf(args, bounds)
    const describe = (args: string[]) => describePdf(files.input, args, bounds)
    // What the edit needs to know, asked of qpdf at once, while the stamp's page is drawn.
    const [report, npages, stamp] = await Promise.all([
      describe(['--json-key=encrypt', '--json-key=qpdf', '--json-object=trailer']),
      qpdf(['--show-npages', files.input]),
      input.stamp ? stampPage(input.stamp) : undefined,
    ])
    const facts = pdfFactsOf(report, npages.stdout.toString('utf8'))
    if (facts.encrypted)
      throw rejected('The PDF is protected by a password or permissions; dutil edits only PDFs without protection.')
    if (facts.pageCount === 0) throw rejected('The PDF has no pages.')
    if (facts.pageCount > EDIT_PDF_LIMITS.maxPages)
      throw rejected(`The PDF has ${facts.pageCount} pages; at most ${EDIT_PDF_LIMITS.maxPages} are allowed.`)
    const ref = infoRefOf(facts.trailer)
    const current = ref ? objectValueOf(await describe(['--json-key=qpdf', `--json-object=${ref}`]), ref) : undefined
    const edit: { stamp?: string; infoUpdate?: string } = {}
    if (stamp) {
      edit.stamp = join(work, 'stamp.pdf')
      await writeFile(edit.stamp, stamp)
    }
    if (input.info) {
      edit.infoUpdate = join(work, 'info.json')
      await writeFile(edit.infoUpdate, JSON.stringify(infoUpdate(facts, current, input.info, new Date())))
    }
    await qpdf(qpdfArgs(input, facts.pageCount, { ...files, ...edit }))
    const name = outputFileName(sourceName, 'pdf', 'document')
    const file = await storeStream(name, createReadStream(files.output), 'application/pdf')
    return {
      files: [file],
      extras: { pageCount: facts.pageCount, ...infoExtras({ ...documentInfoOf(current), ...input.info }) },
    }
  })
}
