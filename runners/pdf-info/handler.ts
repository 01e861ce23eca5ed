import { open } from 'node:fs/promises'
import { documentInfoOf, infoExtras, infoRefOf, objectValueOf, pdfFactsOf } from '../common/pdf-facts.js'
import { describePdf, openedWith, passwordFile, PasswordRequired, requiresPassword, runQpdf } from '../common/qpdf.js'
import { withSpooledInput } from '../common/read-input.js'
import type { UtilityHandler } from '../common/run-utility.js'
import type { StoredFile } from '../../contract/runner-protocol.js'
import { rejected } from '../common/runner-error.js'
import { bookmarksOf, dateExtras, isLinearized, pdfVersionOf, TooManyBookmarks, type Bookmark } from './info.js'
import { PDF_INFO_LIMITS } from './limits.js'

export interface PdfInfoInput {
  url: string
  bookmarks?: boolean
  password?: string
}

/**
 * pdf-info: streams the PDF into the job's scratch space and has qpdf describe it (version,
 * encryption, trailer, pages, the outline when asked, then its Info dictionary). The facts are
 * the job's result; it stores nothing but the bookmarks when asked (bookmarks.json). A PDF
 * that needs a password to be opened is a fact too (`passwordRequired`), not a failure; a file
 * qpdf cannot read fails upstream_rejected with qpdf's reason.
 */
export const handler: UtilityHandler<PdfInfoInput> = async ({ config, input, storage, store }) => {
  const from = {
    storage,
    ...config.outbound,
    maxBytes: PDF_INFO_LIMITS.maxBytes,
    what: 'PDF',
    scratchDir: config.scratchDir,
    fileName: 'input.pdf',
  }
  return withSpooledInput(input.url, from, async ({ path: file, dir: work }) => {
    const bounds = {
      cwd: work,
      timeoutMs: PDF_INFO_LIMITS.qpdfTimeoutMs,
      maxOutputBytes: PDF_INFO_LIMITS.maxReportBytes,
    }
    // Its first kilobyte tells linearization, whether qpdf can open it or not.
    const head = await headOf(file)
    // A password reaches qpdf in a file of the job's own scratch space, never on its command line.
    const password = await passwordFile(work, input.password)
    const opened = password ? [`--password-file=${password}`] : []
    let described: [unknown, string]
    try {
      described = await openedWith(
        input.password,
        Promise.all([
          describePdf(
            file,
            [
              ...opened,
              '--json-key=encrypt',
              '--json-key=qpdf',
              '--json-object=trailer',
              ...(input.bookmarks ? ['--json-key=outlines'] : []),
            ],
            bounds,
          ),
          runQpdf([...opened, '--show-npages', file], bounds).then((r) => r.stdout.toString('utf8')),
        ]),
      )
    } catch (err) {
      if (err instanceof PasswordRequired)
        return {
          files: [],
          extras: { encrypted: true, passwordRequired: true, linearized: isLinearized(head) },
        }
      throw err
    }
    const [report, npages] = described
    const facts = pdfFactsOf(report, npages)
    const ref = infoRefOf(facts.trailer)
    // Opened with the password given, whether it needed one is asked of qpdf on its own, beside the Info read.
    const [info, passwordRequired] = await Promise.all([
      ref
        ? describePdf(file, [...opened, '--json-key=qpdf', `--json-object=${ref}`], bounds).then((r) =>
            objectValueOf(r, ref),
          )
        : undefined,
      facts.encrypted && password ? requiresPassword(file, bounds) : false,
    ])
    const version = pdfVersionOf(report)
    const files: StoredFile[] = []
    let bookmarkCount: number | undefined
    if (input.bookmarks) {
      let outline: { bookmarks: Bookmark[]; count: number }
      try {
        outline = bookmarksOf(report, PDF_INFO_LIMITS.maxBookmarks)
      } catch (err) {
        if (err instanceof TooManyBookmarks)
          throw rejected(
            `The PDF has more than ${err.max.toLocaleString('en')} bookmarks; pdf-info reads at most that many.`,
          )
        throw err
      }
      bookmarkCount = outline.count
      files.push(await store('bookmarks.json', Buffer.from(JSON.stringify(outline.bookmarks)), 'application/json'))
    }
    return {
      files,
      extras: {
        ...(bookmarkCount === undefined ? {} : { bookmarkCount }),
        pageCount: facts.pageCount,
        ...(version ? { pdfVersion: version } : {}),
        encrypted: facts.encrypted,
        passwordRequired,
        linearized: isLinearized(head),
        ...infoExtras(documentInfoOf(info)),
        ...dateExtras(info),
      },
    }
  })
}

/** The file's first kilobyte. */
async function headOf(path: string): Promise<Buffer> {
  const f = await open(path, 'r')
  try {
    const { buffer, bytesRead } = await f.read(Buffer.alloc(1024), 0, 1024, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await f.close()
  }
}
