import Type from 'typebox'
import type { UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl } from '../../contract/url-schemas.js'
import { PAGE_RANGES_PATTERN } from '../../contract/page-ranges.js'
import { OFFICE_PDF_LIMITS } from './limits.js'

export { OFFICE_PDF_LIMITS }

export const officePdf: UtilityDefinition = {
  slug: 'office-pdf',
  name: 'Office document to PDF',
  description:
    'Converts a Word, Excel, PowerPoint or OpenDocument file (docx, doc, odt, fodt, rtf, xlsx, xls, ods, fods, pptx, ppt, odp, fodp), or plain text named .txt or .csv (at most 100 MB, no password protection), to PDF with LibreOffice; optionally some pages, landscape, PDF/A or PDF/UA.',
  category: 'pdf',
  icon: 'description',
  target: 'pdf',
  maxDurationSeconds: OFFICE_PDF_LIMITS.maxDurationSeconds,
  inputSchema: Type.Object(
    {
      url: StorageOrHttpUrl,
      pageRanges: Type.Optional(
        Type.String({
          maxLength: 200,
          pattern: PAGE_RANGES_PATTERN,
          description: 'The pages to convert, e.g. "1-3,5" or "2-" (to the end); all pages when absent.',
        }),
      ),
      landscape: Type.Optional(
        Type.Boolean({
          description:
            "Turns the pages of a text document or spreadsheet landscape; slides keep their own format. Default: the document's own orientation.",
        }),
      ),
      pdfa: Type.Optional(
        Type.Union([Type.Literal('PDF/A-1b'), Type.Literal('PDF/A-2b'), Type.Literal('PDF/A-3b')], {
          description: 'Makes an archival PDF of this PDF/A level.',
        }),
      ),
      pdfua: Type.Optional(Type.Boolean({ description: 'Makes an accessible PDF (PDF/UA: tagged, with structure).' })),
    },
    { additionalProperties: false },
  ),
  exampleInput: { url: 'https://example.com/report.docx', pdfa: 'PDF/A-2b' },
  enabled: true,
  runner: {
    image: 'dutil-runner-office-pdf',
    entry: 'dist/runners/office-pdf/bundle/main.js',
    // The main thread downloads, detects and uploads; LibreOffice converts in processes of its own.
    maxHeapMb: 256,
    resources: { requests: { cpu: '500m', memory: '768Mi' }, limits: { cpu: '2', memory: '2Gi' } },
    backoffLimit: 1,
    concurrency: 2,
    // The document, LibreOffice's profile and the PDF it writes.
    scratchSizeLimit: '1Gi',
  },
}
