import { createReadStream } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { outputFileName } from '../common/file-names.js'
import { withSpooledInput } from '../common/read-input.js'
import type { UtilityHandler } from '../common/run-utility.js'
import { rejected } from '../common/runner-error.js'
import { documentInfoOf, infoExtras, infoRefOf, objectValueOf, pdfFactsOf } from '../common/pdf-facts.js'
import { describePdf, openedWith, runQpdf } from '../common/qpdf.js'
import { encryptArgs, infoUpdate, qpdfArgs, type EditFiles, type EditPdfInput } from './edit.js'
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
    const files: EditFiles = { input: path, output: join(work, 'output.pdf') }
    // Passwords reach qpdf in files of the job's own scratch space, never on its command line.
    if (input.password !== undefined) {
      files.passwordFile = join(work, 'password')
      await writeFile(files.passwordFile, input.password, { mode: 0o600 })
    }
    if (input.encrypt) {
      files.encryptArgs = join(work, 'encrypt.args')
      await writeFile(files.encryptArgs, encryptArgs(input.encrypt).join('\n') + '\n', { mode: 0o600 })
    }
    const opened = files.passwordFile ? [`--password-file=${files.passwordFile}`] : []
    const bounds = {
      cwd: work,
      timeoutMs: EDIT_PDF_LIMITS.qpdfTimeoutMs,
      maxOutputBytes: EDIT_PDF_LIMITS.maxReportBytes,
    }
    const qpdf = (args: string[]) => runQpdf(args, bounds)
    const describe = (args: string[]) => describePdf(files.input, [...opened, ...args], bounds)
    // What the edit needs to know, asked of qpdf at once, while the stamp's page is drawn.
    const [report, npages, stamp] = await openedWith(
      input.password,
      Promise.all([
        describe(['--json-key=encrypt', '--json-key=qpdf', '--json-object=trailer']),
        qpdf([...opened, '--show-npages', files.input]),
        input.stamp ? stampPage(input.stamp) : undefined,
      ]),
    )
    const facts = pdfFactsOf(report, npages.stdout.toString('utf8'))
    if (facts.encrypted && !facts.ownerPasswordMatched)
      throw rejected(
        input.password === undefined
          ? 'The PDF is protected by a password or permissions: give its owner password in `password` to edit it.'
          : 'The password given opens the PDF but does not lift its permissions: edit-pdf needs its owner password.',
      )
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
      extras: {
        pageCount: facts.pageCount,
        encrypted: input.encrypt !== undefined,
        ...infoExtras({ ...documentInfoOf(current), ...input.info }),
      },
    }
  })
}
