import { createReadStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { outputFileName } from '../common/file-names.js'
import { openInput, readWhole } from '../common/read-input.js'
import type { UtilityHandler } from '../common/run-utility.js'
import { rejected, RunnerError } from '../common/runner-error.js'
import { DAMAGED_DOCUMENT, detectOffice } from './detect.js'
import { OFFICE_PDF_LIMITS } from './limits.js'
import type { Office, OfficeRequest } from './office.js'
import { countPdfPages } from './page-count.js'

export interface OfficePdfInput {
  url: string
  pageRanges?: string
  landscape?: boolean
  pdfa?: 'PDF/A-1b' | 'PDF/A-2b' | 'PDF/A-3b'
  pdfua?: boolean
}

const PDF_VERSIONS = { 'PDF/A-1b': 1, 'PDF/A-2b': 2, 'PDF/A-3b': 3 } as const

/** The conversion asked for, as LibreOffice's PDF export takes it. */
export function officeRequest(input: OfficePdfInput, inputPath: string, outputPath: string): OfficeRequest {
  return {
    input: inputPath,
    output: outputPath,
    ...(input.pageRanges ? { pageRange: input.pageRanges } : {}),
    landscape: input.landscape === true,
    pdfVersion: input.pdfa ? PDF_VERSIONS[input.pdfa] : 0,
    pdfua: input.pdfua === true,
  }
}

/** LibreOffice's answer turned into the job's failure (null: it succeeded). */
export function conversionFailure(answer: Awaited<ReturnType<Office['convert']>>): RunnerError | null {
  if (answer.ok) return null
  switch (answer.reason) {
    case 'password':
      return rejected('The document is protected by a password; dutil converts only documents without one.')
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
    const bytes = await readWhole(source.body)
    const format = await detectOffice(bytes)
    const work = await mkdtemp(join(config.scratchDir, 'office-'))
    try {
      const inputPath = join(work, `input.${format}`)
      const outputPath = join(work, 'output.pdf')
      await writeFile(inputPath, bytes)
      const answer = await (await office()).convert(officeRequest(input, inputPath, outputPath))
      const failure = conversionFailure(answer)
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
