import Type from 'typebox'
import type { UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl } from '../../contract/url-schemas.js'
import { PAGE_RANGES_PATTERN } from '../../contract/page-ranges.js'
import { OFFICE_PDF_LIMITS } from './limits.js'
import { passwordSchema } from '../common/password-schema.js'

export { OFFICE_PDF_LIMITS }

export const officePdf: UtilityDefinition = {
  slug: 'office-pdf',
  name: 'Office document to PDF',
  description:
    'Converts a Word, Excel, PowerPoint or OpenDocument file (docx, doc, odt, fodt, rtf, xlsx, xls, ods, fods, pptx, ppt, odp, fodp), or plain text named .txt or .csv (at most 100 MB; a protected docx, xlsx, pptx, OpenDocument, doc or xls file with its password), to PDF with LibreOffice; optionally some pages, landscape, PDF/A or PDF/UA.',
  category: 'pdf',
  icon: 'description',
  target: 'pdf',
  maxDurationSeconds: OFFICE_PDF_LIMITS.maxDurationSeconds,
  inputSchema: Type.Object(
    {
      url: StorageOrHttpUrl,
      password: Type.Optional(
        passwordSchema(
          'Opens a password-protected docx, xlsx, pptx, OpenDocument, doc or xls file (a protected ppt is refused). Sealed until the runner opens it; never shown again.',
        ),
      ),
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
      imageQuality: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 100,
          description: 'JPEG quality of the pictures, 1 to 100 (lower: a smaller file). Default: 90.',
        }),
      ),
      maxImageResolution: Type.Optional(
        Type.Union(
          [75, 150, 300, 600, 1200].map((dpi) => Type.Literal(dpi)),
          {
            description:
              'Scales pictures down to at most this many dots per inch (75, 150, 300, 600 or 1200). Default: pictures keep their resolution.',
          },
        ),
      ),
      losslessImages: Type.Optional(
        Type.Boolean({ description: 'Compresses pictures losslessly (PNG-like) instead of as JPEG. Default: false.' }),
      ),
      exportBookmarks: Type.Optional(
        Type.Boolean({ description: "The document's headings as the PDF's bookmarks (outline). Default: true." }),
      ),
      exportNotes: Type.Optional(
        Type.Boolean({ description: "The document's comments as PDF annotations. Default: false." }),
      ),
      exportFormFields: Type.Optional(
        Type.Boolean({
          description: "The document's form controls as PDF form fields (false: printed as they look). Default: true.",
        }),
      ),
      singlePageSheets: Type.Optional(
        Type.Boolean({ description: 'Each sheet of a spreadsheet on one page of its own size. Default: false.' }),
      ),
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
