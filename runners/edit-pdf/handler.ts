import { createReadStream, createWriteStream } from 'node:fs'
import { stat, writeFile } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import { join } from 'node:path'
import { outputFileName } from '../common/file-names.js'
import { downloadInput, limitText, openInput, withSpooledInput, type SourceOptions } from '../common/read-input.js'
import type { UtilityHandler } from '../common/run-utility.js'
import { rejected } from '../common/runner-error.js'
import { documentInfoOf, infoExtras, infoRefOf, objectValueOf, pdfFactsOf, rootRefOf } from '../common/pdf-facts.js'
import { describePdf, openedWith, passwordFile, runQpdf } from '../common/qpdf.js'
import { documentUpdate, encryptArgs, qpdfArgs, type EditFiles, type EditPdfInput } from './edit.js'
import { bookmarkCount, pageOutside, pageRefsOf } from './outline.js'
import { EDIT_PDF_LIMITS } from './limits.js'
import { rewrites } from './ghostscript.js'
import { attachmentKeysOf, rewriteAndFinish } from './rewrite.js'
import { identifyAndFinish } from './identify.js'

/**
 * The page qpdf lays on the pages stamped: the text or the picture drawn on a page of its own
 * (pdf-lib, a large share of the bundle, loaded only by a job that stamps), or a PDF as it came
 * (its first page). A picture or PDF is read whole, within its bound, and told by its content.
 */
async function stampFile(
  stamp: NonNullable<EditPdfInput['stamp']>,
  from: Omit<SourceOptions, 'maxBytes' | 'what'>,
): Promise<Uint8Array> {
  const m = await import('./stamp.js')
  if (stamp.image === undefined) return m.stampPage(stamp)
  const bytes = await downloadInput(stamp.image, { ...from, maxBytes: EDIT_PDF_LIMITS.maxStampBytes, what: 'stamp' })
  const kind = m.stampSourceOf(bytes, EDIT_PDF_LIMITS.maxStampPixels)
  if (typeof kind === 'string') throw rejected(`stamp.image: ${kind}.`)
  if (kind.kind !== 'pdf')
    return m.stampPage(stamp, kind).catch((err: unknown) => {
      throw err instanceof m.UnreadableStamp ? rejected(`stamp.image: ${err.message}.`) : err
    })
  if (stamp.angle !== undefined || stamp.opacity !== undefined || stamp.scale !== undefined)
    throw rejected(
      'stamp.image: a PDF is laid as its first page is drawn; angle, opacity and scale apply to text and pictures.',
    )
  return bytes
}

/**
 * The files to embed, one after another into the job's scratch space (each within its bound and
 * all of them within theirs), named as given or after their URL's last segment; two of one name
 * are refused (the second would replace the first).
 */
async function spooledAttachments(
  attachments: NonNullable<EditPdfInput['attachments']>,
  work: string,
  from: Omit<SourceOptions, 'maxBytes' | 'what'>,
): Promise<NonNullable<EditFiles['attachments']>> {
  const out: NonNullable<EditFiles['attachments']> = []
  let total = 0
  for (const [i, a] of attachments.entries()) {
    const left = EDIT_PDF_LIMITS.maxAttachmentsBytes - total
    const source = await openInput(a.url, {
      ...from,
      maxBytes: Math.min(EDIT_PDF_LIMITS.maxAttachmentBytes, left),
      what:
        left < EDIT_PDF_LIMITS.maxAttachmentBytes
          ? `attachments.${i} file (the files embedded take ${limitText(EDIT_PDF_LIMITS.maxAttachmentsBytes)} in all)`
          : `attachments.${i} file`,
    })
    const path = join(work, `attachment-${i}`)
    await pipeline(source.body, createWriteStream(path))
    total += (await stat(path)).size
    const name = a.name ?? (source.name || `attachment-${i + 1}`)
    if (out.some((o) => o.name === name))
      throw rejected(
        `attachments.${i}: another file is already named ${JSON.stringify(name)}; give it a name of its own.`,
      )
    out.push({
      path,
      name,
      ...(a.description ? { description: a.description } : {}),
      ...(a.mimeType ? { mimeType: a.mimeType } : {}),
    })
  }
  return out
}

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
    // Passwords reach qpdf in files of the job's own scratch space, never on its command line.
    const files: EditFiles = {
      input: path,
      output: join(work, 'output.pdf'),
      passwordFile: await passwordFile(work, input.password),
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
        describe([
          '--json-key=encrypt',
          '--json-key=qpdf',
          '--json-object=trailer',
          // Bookmarks open pages: their objects.
          ...(input.bookmarks ? ['--json-key=pages'] : []),
          // A PDF/A document carries no embedded files: the ones to remove.
          ...(input.pdfa ? ['--json-key=attachments'] : []),
        ]),
        qpdf([...opened, '--show-npages', files.input]),
        input.stamp ? stampFile(input.stamp, { storage, ...config.outbound }) : undefined,
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
    const outside = input.bookmarks && pageOutside(input.bookmarks, facts.pageCount)
    if (outside) throw rejected(`bookmarks: page ${outside} is past the PDF's last page (it has ${facts.pageCount}).`)
    const ref = infoRefOf(facts.trailer)
    // The Info dictionary and, for bookmarks, the catalog they hang from, read in one run of qpdf.
    const rootRef = input.bookmarks ? rootRefOf(facts.trailer) : undefined
    const wanted = [ref, rootRef].filter((r): r is string => r !== undefined)
    const objectsRead = wanted.length
      ? describe(['--json-key=qpdf', ...wanted.map((r) => `--json-object=${r}`)])
      : Promise.resolve(undefined)
    // Awaited below; until then its failure must not count as unhandled (it would end the process).
    objectsRead.catch(() => undefined)
    if (stamp) {
      files.stamp = join(work, 'stamp.pdf')
      await writeFile(files.stamp, stamp)
    }
    if (input.attachments)
      files.attachments = await spooledAttachments(input.attachments, work, { storage, ...config.outbound })
    // Ghostscript's rewrite (pdfa, pictures) splits the edit in two: qpdf's edits of the pages
    // before it (when there are any), of the file after it.
    // So does making it accessible (pdfua, by pdf-lib): the information is written before it.
    const rewrite = rewrites(input)
    const split = rewrite || input.pdfua === true
    if (input.pdfa) files.removeAttachments = attachmentKeysOf(report)
    const writesInfo = input.info !== undefined && !rewrite
    const pageEdits =
      !split ||
      Boolean(input.flatten || input.rotate || input.stamp || input.bookmarks || input.attachments || writesInfo) ||
      files.passwordFile !== undefined ||
      (files.removeAttachments?.length ?? 0) > 0
    const edited = split ? join(work, 'stage-1.pdf') : files.output
    const args = () => qpdfArgs(input, facts.pageCount, { ...files, output: edited }, split ? 'before' : 'whole')
    let objects: unknown
    if (writesInfo || input.bookmarks) {
      // The update is written from what the document has: read first, then the edit.
      objects = await objectsRead
      const current = ref ? objectValueOf(objects, ref) : undefined
      const root = rootRef ? objectValueOf(objects, rootRef) : undefined
      if (input.bookmarks && (!rootRef || !root))
        throw rejected('The PDF has no document catalog to hang bookmarks from.')
      files.infoUpdate = join(work, 'update.json')
      const update = documentUpdate(facts, {
        ...(writesInfo ? { info: { current, info: input.info!, now: new Date() } } : {}),
        ...(input.bookmarks
          ? {
              outline: {
                root: { ref: rootRef!, value: root! },
                pageRefs: pageRefsOf(report),
                bookmarks: input.bookmarks,
              },
            }
          : {}),
      })
      await writeFile(files.infoUpdate, JSON.stringify(update))
      await qpdf(args())
    } else {
      // The document information only goes into the result: read beside the edit.
      ;[objects] = await Promise.all([objectsRead, pageEdits ? qpdf(args()) : undefined])
    }
    const current = ref ? objectValueOf(objects, ref) : undefined
    if (input.pdfua)
      await identifyAndFinish({
        input,
        pageCount: facts.pageCount,
        source: pageEdits ? edited : files.input,
        output: files.output,
        work,
        qpdf,
      })
    const info = rewrite
      ? await rewriteAndFinish({
          input,
          pageCount: facts.pageCount,
          source: pageEdits ? edited : files.input,
          output: files.output,
          work,
          original: current,
          encryptArgs: files.encryptArgs,
          timeoutMs: EDIT_PDF_LIMITS.rewriteTimeoutMs,
          describe: (file, args) => describePdf(file, args, bounds),
          qpdf,
        })
      : { ...documentInfoOf(current), ...input.info }
    const name = outputFileName(sourceName, 'pdf', 'document')
    const file = await storeStream(name, createReadStream(files.output), 'application/pdf')
    return {
      files: [file],
      extras: {
        pageCount: facts.pageCount,
        encrypted: input.encrypt !== undefined,
        ...(input.bookmarks ? { bookmarkCount: bookmarkCount(input.bookmarks) } : {}),
        ...(files.attachments ? { attachmentCount: files.attachments.length } : {}),
        ...infoExtras(info),
      },
    }
  })
}
