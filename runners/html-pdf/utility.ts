import Type from 'typebox'
import type { InputProblem, UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl } from '../../contract/url-schemas.js'

export const PAPER_FORMATS = ['Letter', 'Legal', 'Tabloid', 'Ledger', 'A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6'] as const

/** A CSS length Chromium's printer understands: a number with a px, in, cm or mm suffix. */
export const CssLength = Type.String({
  maxLength: 32,
  pattern: '^(0|[0-9]+(\\.[0-9]+)?(px|in|cm|mm))$',
  description: 'A length with a unit: px, in, cm or mm (e.g. "10mm", "0.5in").',
})

export const PdfOptionsSchema = Type.Object(
  {
    format: Type.Optional(
      Type.Union(
        PAPER_FORMATS.map((f) => Type.Literal(f)),
        { description: 'Paper format; not together with width/height.' },
      ),
    ),
    width: Type.Optional(CssLength),
    height: Type.Optional(CssLength),
    orientation: Type.Optional(Type.Union([Type.Literal('portrait'), Type.Literal('landscape')])),
    landscape: Type.Optional(Type.Boolean({ description: 'Same as orientation "landscape".' })),
    scale: Type.Optional(
      Type.Number({ minimum: 0.1, maximum: 2, description: 'Rendering scale, 0.1 to 2 (default 1).' }),
    ),
    preferCSSPageSize: Type.Optional(Type.Boolean()),
    printBackground: Type.Optional(Type.Boolean()),
    margin: Type.Optional(
      Type.Object(
        {
          top: Type.Optional(CssLength),
          right: Type.Optional(CssLength),
          bottom: Type.Optional(CssLength),
          left: Type.Optional(CssLength),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'Chromium print options.' },
)

/** Rules between pdfOptions keys that JSON Schema cannot say plainly. */
export function checkPdfOptions(input: unknown): InputProblem[] {
  const o = (input as { pdfOptions?: Record<string, unknown> }).pdfOptions
  if (!o) return []
  const problems: InputProblem[] = []
  if (o.format !== undefined && (o.width !== undefined || o.height !== undefined)) {
    problems.push({ path: 'pdfOptions', message: 'use either format or width/height, not both' })
  }
  if ((o.width === undefined) !== (o.height === undefined)) {
    problems.push({
      path: o.width === undefined ? 'pdfOptions.width' : 'pdfOptions.height',
      message: 'width and height must be given together',
    })
  }
  if (o.orientation !== undefined && o.landscape !== undefined && (o.orientation === 'landscape') !== o.landscape) {
    problems.push({ path: 'pdfOptions.landscape', message: 'contradicts orientation' })
  }
  return problems
}

export const htmlPdf: UtilityDefinition = {
  slug: 'html-pdf',
  name: 'HTML to PDF',
  description:
    'Renders an HTML document (public URL or s3:// URL) to PDF with page size, orientation, scale and margins.',
  category: 'pdf',
  icon: 'picture_as_pdf',
  target: 'pdf',
  maxDurationSeconds: 900,
  inputSchema: Type.Object(
    { url: StorageOrHttpUrl, pdfOptions: Type.Optional(PdfOptionsSchema) },
    { additionalProperties: false },
  ),
  exampleInput: {
    url: 'https://example.com/invoice.html',
    pdfOptions: { format: 'A4', printBackground: true, margin: { top: '10mm', bottom: '10mm' } },
  },
  enabled: true,
  checkInput: checkPdfOptions,
  runner: {
    image: 'dutil-runner-html-pdf',
    entry: 'dist/runners/html-pdf/bundle/main.js',
    maxHeapMb: 512,
    // Requests from the measured cost of a small page on the headless shell (docs/operations.md):
    // ~0.6 CPU-seconds and under 160 MB for the runner and its browser.
    resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '2', memory: '2Gi' } },
    backoffLimit: 2,
    concurrency: 5,
    // Chromium's profile and its shared memory (--disable-dev-shm-usage) live here.
    scratchSizeLimit: '1Gi',
    browser: true,
  },
}
