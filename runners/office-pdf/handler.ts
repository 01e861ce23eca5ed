import { createReadStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { outputFileName } from '../common/file-names.js'
import { openInput, readWhole } from '../common/read-input.js'
import type { UtilityHandler } from '../common/run-utility.js'
import { rejected, RunnerError } from '../common/runner-error.js'
import { DAMAGED_DOCUMENT, detectOffice, PASSWORD_NEEDED, type OfficeFormat } from './detect.js'
import { decryptOoxml, ProtectedDocumentError, WRONG_PASSWORD } from './ooxml-encryption.js'
import { checkLegacyPassword } from './legacy-encryption.js'
import { decryptOdf } from './odf-encryption.js'
import { OFFICE_PDF_LIMITS } from './limits.js'
import type { Office, OfficeExportOptions, OfficeRequest } from './office.js'
import { countPdfPages } from './page-count.js'

export interface OfficePdfInput extends OfficeExportOptions {
  url: string
  /** Opens a protected docx, xlsx, pptx, OpenDocument, doc or xls file (sealed until the runner, docs/adr/0042). */
  password?: string
  pageRanges?: string
  landscape?: boolean
  pdfa?: 'PDF/A-1b' | 'PDF/A-2b' | 'PDF/A-3b'
  pdfua?: boolean
}

const PDF_VERSIONS = { 'PDF/A-1b': 1, 'PDF/A-2b': 2, 'PDF/A-3b': 3 } as const

/**
 * How LibreOffice reads plain text (every other format it tells itself): a text document as
 * UTF-8 prose; a CSV file as UTF-8 comma-separated cells, quoted by ", every column imported as
 * text, so a cell that starts with `=` stays what it says and no formula (WEBSERVICE and its
 * kind) is ever evaluated. A CSV file wider than a sheet is refused.
 */
export function importFilterOf(
  format: OfficeFormat,
  document: Buffer,
): Pick<OfficeRequest, 'importFilter' | 'importOptions'> {
  if (format === 'txt') return { importFilter: 'Text (encoded)', importOptions: 'UTF8' }
  if (format !== 'csv') return {}
  const columns = csvColumns(document)
  if (columns > MAX_CSV_COLUMNS)
    throw rejected(`The CSV file has more than ${MAX_CSV_COLUMNS} columns, the most a spreadsheet takes.`)
  const asText = Array.from({ length: columns }, (_, i) => `${i + 1}/2`).join('/')
  return { importFilter: 'Text - txt - csv (StarCalc)', importOptions: `44,34,76,1,${asText}` }
}

/** Calc's columns (1,024 in LibreOffice 7.4): a CSV file with more is refused. */
export const MAX_CSV_COLUMNS = 1024

/** The most fields a line of the CSV file has (separators outside quotes, plus one). */
export function csvColumns(document: Buffer): number {
  let most = 1
  let fields = 1
  let quoted = false
  for (const byte of document) {
    if (byte === 0x22) quoted = !quoted
    else if (quoted) continue
    else if (byte === 0x2c) fields++
    else if (byte === 0x0a) {
      most = Math.max(most, fields)
      fields = 1
    }
  }
  return Math.max(most, fields)
}

/** Formats LibreOffice decrypts itself: Word and Excel 97–2003 (RC4, and XOR obfuscation). */
const OPENED_BY_OFFICE: ReadonlySet<OfficeFormat> = new Set(['doc', 'xls'])

/**
 * The conversion asked for, as LibreOffice's PDF export takes it. A password goes to LibreOffice
 * only for a doc or xls file (it opens those itself, and ignores a password a document does not
 * need); every other protected format was decrypted before (unprotected) or refused (detect.ts).
 */
export function officeRequest(
  input: OfficePdfInput,
  inputPath: string,
  outputPath: string,
  format: OfficeFormat,
): OfficeRequest {
  // The export options pass as they are: the schema took no other keys.
  const { url: _url, password, pageRanges, landscape, pdfa, pdfua, ...exportOptions } = input
  return {
    input: inputPath,
    output: outputPath,
    ...(password !== undefined && OPENED_BY_OFFICE.has(format) ? { password } : {}),
    ...(pageRanges ? { pageRange: pageRanges } : {}),
    landscape: landscape === true,
    pdfVersion: pdfa ? PDF_VERSIONS[pdfa] : 0,
    pdfua: pdfua === true,
    ...exportOptions,
  }
}

/**
 * The document as it is checked and converted: a protected docx, xlsx or pptx, or a protected
 * OpenDocument file, decrypted with its password in memory; a protected doc or xls file as it
 * came, once its password is known to open it (LibreOffice decrypts it); anything else as it came
 * (a password for a document without one is not needed, and goes unused).
 */
export async function unprotected(bytes: Buffer, password: string | undefined): Promise<Buffer> {
  if (password === undefined) return bytes
  try {
    const decrypted = decryptOoxml(bytes, password) ?? (await decryptOdf(bytes, password))
    if (decrypted) return decrypted
    checkLegacyPassword(bytes, password)
    return bytes
  } catch (err) {
    if (err instanceof ProtectedDocumentError) throw rejected(err.message)
    throw err
  }
}

/** LibreOffice's answer turned into the job's failure (null: it succeeded); `req` is what it was asked. */
export function conversionFailure(
  answer: Awaited<ReturnType<Office['convert']>>,
  req: OfficeRequest,
): RunnerError | null {
  if (answer.ok) return null
  switch (answer.reason) {
    case 'password':
      return rejected(req.password === undefined ? PASSWORD_NEEDED : WRONG_PASSWORD)
    case 'load':
      return rejected(DAMAGED_DOCUMENT)
    case 'export':
      return rejected('LibreOffice could not convert the document to PDF.')
    case 'office':
      return new RunnerError('upstream_error', 'LibreOffice stopped while converting the document.')
  }
}

/**
 * office-pdf: downloads the document (within its size limit), tells its format by its content,
 * and has LibreOffice convert it in a scratch directory of the job's own; the PDF, named after
 * the document (`report.docx` → `report.pdf`, else `document.pdf`), is streamed to storage. `office` gives the LibreOffice to use: a new one per job in job mode (started while
 * the document downloads), the pod's warm one in pool mode.
 */
export function officeHandler(office: () => Promise<Office>): UtilityHandler<OfficePdfInput> {
  return async ({ config, input, storage, storeStream }) => {
    const source = await openInput(input.url, {
      storage,
      ...config.outbound,
      maxBytes: OFFICE_PDF_LIMITS.maxBytes,
      what: 'document',
    })
    const bytes = await unprotected(await readWhole(source.body), input.password)
    const format = await detectOffice(bytes, source.name, input.password !== undefined)
    const reading = importFilterOf(format, bytes)
    const work = await mkdtemp(join(config.scratchDir, 'office-'))
    try {
      const inputPath = join(work, `input.${format}`)
      const outputPath = join(work, 'output.pdf')
      await writeFile(inputPath, bytes)
      const req = { ...officeRequest(input, inputPath, outputPath, format), ...reading }
      const answer = await (await office()).convert(req)
      const failure = conversionFailure(answer, req)
      if (failure) throw failure
      const pageCount = await countPdfPages(outputPath)
      if (pageCount === 0)
        throw rejected(
          input.pageRanges
            ? `The page ranges "${input.pageRanges}" select no page of the document.`
            : 'The document has no page to convert.',
        )
      if (pageCount > OFFICE_PDF_LIMITS.maxPages)
        throw rejected(
          `The document converts to ${pageCount} pages; at most ${OFFICE_PDF_LIMITS.maxPages} are allowed.`,
        )
      const name = outputFileName(source.name, 'pdf', 'document')
      const file = await storeStream(name, createReadStream(outputPath), 'application/pdf')
      return { files: [file], extras: { pageCount, format } }
    } finally {
      await rm(work, { recursive: true, force: true })
    }
  }
}
