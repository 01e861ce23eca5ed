import Type from 'typebox'
import type { InputProblem, UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl, StorageUrl } from '../../contract/url-schemas.js'
import { PAGE_RANGES_PATTERN } from '../../contract/page-ranges.js'
import { assetNameOf, isMarkdownName } from './assets.js'
import { MAX_WAIT_MS } from './print-options.js'

export const PAPER_FORMATS = ['Letter', 'Legal', 'Tabloid', 'Ledger', 'A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6'] as const

/** A CSS length Chromium's printer understands: a number with a px, in, cm or mm suffix. */
export const CssLength = Type.String({
  maxLength: 32,
  pattern: '^(0|[0-9]+(\\.[0-9]+)?(px|in|cm|mm))$',
  description: 'A length with a unit: px, in, cm or mm (e.g. "10mm", "0.5in").',
})

/** The most characters of a header or footer template. */
export const MAX_TEMPLATE_CHARS = 64 * 1024

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
    pageRanges: Type.Optional(
      Type.String({
        maxLength: 200,
        pattern: PAGE_RANGES_PATTERN,
        description: 'The pages to print, e.g. "1-3,5" or "2-" (to the end), in document order; all pages when absent.',
      }),
    ),
    headerTemplate: Type.Optional(
      Type.String({
        maxLength: MAX_TEMPLATE_CHARS,
        description:
          'HTML printed at the top of every page, in the top margin (give one): elements of class pageNumber, totalPages, date, title and url are filled in. Pictures as data: URLs only.',
      }),
    ),
    footerTemplate: Type.Optional(
      Type.String({
        maxLength: MAX_TEMPLATE_CHARS,
        description: 'HTML printed at the bottom of every page, in the bottom margin, as headerTemplate.',
      }),
    ),
    tagged: Type.Optional(Type.Boolean({ description: 'A tagged (accessible) PDF.' })),
    singlePage: Type.Optional(
      Type.Boolean({
        description:
          "The whole page on one PDF page, as tall as its content (at most 200 in) on the paper's width; not with pageRanges or preferCSSPageSize.",
      }),
    ),
    omitBackground: Type.Optional(
      Type.Boolean({ description: "No white page background: where the page has none, the PDF's is transparent." }),
    ),
    outline: Type.Optional(
      Type.Boolean({ description: "The document's outline (bookmarks) from its headings; makes the PDF tagged." }),
    ),
    pdfa: Type.Optional(
      Type.Union([Type.Literal('PDF/A-2b'), Type.Literal('PDF/A-3b')], {
        description:
          "An archival PDF of this PDF/A level: Chromium's PDF (its fonts embedded) with an sRGB output intent and XMP metadata agreeing with its document information. PDF/A-1b is not offered: Chromium's pages use transparency, which PDF/A-1 lacks.",
      }),
    ),
    pdfua: Type.Optional(
      Type.Boolean({
        description:
          'An accessible PDF (PDF/UA-1): tagged, its title shown by readers, its links described, declared in its metadata. The page needs a <title> and a language (<html lang>).',
      }),
    ),
  },
  { additionalProperties: false, description: 'Chromium print options.' },
)

/** What to wait for once the page has loaded, before it is printed (each bounded by MAX_WAIT_MS in all). */
export const PageWait = Type.Object(
  {
    selector: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1000, description: 'A CSS selector: wait until an element matches it.' }),
    ),
    expression: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 10_000,
        description:
          "A JavaScript expression evaluated in the page: wait until it is truthy (the page's own scripts run as they do).",
      }),
    ),
    delayMs: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_WAIT_MS, description: 'Then wait this many milliseconds more.' }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Waits after the page has loaded, before printing: at most 30 s in all, or the job fails upstream_rejected.',
  },
)

/** The most characters of a page given as `html` in the request (larger pages come as uploads). */
export const MAX_INLINE_HTML_CHARS = 2 * 1024 * 1024
/** The most files a page given in the request (or uploaded) may take beside it. */
export const MAX_PAGE_ASSETS = 100

/**
 * An asset's name: the relative path the page refers to it by (`logo.png`, `fonts/a.woff2`):
 * segments of at most 255 characters, no `.` or `..` segment, no backslash, no control character.
 */
export const AssetName = Type.String({
  minLength: 1,
  maxLength: 1024,
  pattern: '^[^/\\\\\\u0000-\\u001f\\u007f?#][^\\\\\\u0000-\\u001f\\u007f?#]*$',
  description:
    'The relative path the page refers to the file by (e.g. "logo.png", "fonts/body.woff2"); by default the upload\'s file name.',
})

export const PageAsset = Type.Object(
  { url: StorageUrl, name: Type.Optional(AssetName) },
  { additionalProperties: false, description: 'A file of the page: an upload (or an earlier output) of the caller.' },
)

/** The most characters of a stylesheet given for a Markdown page. */
export const MAX_STYLESHEET_CHARS = 256 * 1024

/** A page's source and how it is loaded, as html-pdf and html-image take them. */
export const PAGE_SOURCE = {
  url: Type.Optional(StorageOrHttpUrl),
  html: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_INLINE_HTML_CHARS,
      description:
        'The page itself (at most 2 MiB characters), instead of url. Its relative references resolve to its assets.',
    }),
  ),
  markdown: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_INLINE_HTML_CHARS,
      description:
        'The page as Markdown (GitHub-flavoured, at most 2 MiB characters), instead of url or html: rendered with a default stylesheet, or stylesheet. Its relative references resolve to its assets.',
    }),
  ),
  stylesheet: Type.Optional(
    Type.String({
      maxLength: MAX_STYLESHEET_CHARS,
      description:
        'CSS for a Markdown page (markdown, or an s3:// document named .md), in place of the default stylesheet; at most 256 KiB characters.',
    }),
  ),
  assets: Type.Optional(
    Type.Array(PageAsset, {
      maxItems: MAX_PAGE_ASSETS,
      description: 'Files the page refers to by relative path (images, styles, fonts), beside html or an s3:// url.',
    }),
  ),
}

/** How a loaded page is shown and waited for, as html-pdf and html-image take them. */
export const PAGE_LOADING = {
  media: Type.Optional(
    Type.Union([Type.Literal('print'), Type.Literal('screen')], {
      description: 'The CSS media type the page is laid out for (default print).',
    }),
  ),
  wait: Type.Optional(PageWait),
}

/** Rules JSON Schema cannot say plainly: one page source, assets beside a page of dutil's own, pdfOptions. */
export function checkHtmlPdf(input: unknown): InputProblem[] {
  return [...checkPage(input), ...checkPdfOptions(input)]
}

/** A page's own rules (html-pdf and html-image): one page source, assets beside a page of dutil's own. */
export function checkPage(input: unknown): InputProblem[] {
  const i = input as {
    url?: string
    html?: string
    markdown?: string
    stylesheet?: string
    assets?: Array<{ url: string; name?: string }>
  }
  const problems: InputProblem[] = []
  const sources = (['url', 'html', 'markdown'] as const).filter((k) => i[k] !== undefined)
  if (sources.length !== 1)
    problems.push({
      path: sources[1] ?? 'url',
      message: 'give the page as one of url, html or markdown',
    })
  if (i.assets?.length && i.url !== undefined && !i.url.startsWith('s3://'))
    problems.push({
      path: 'assets',
      message: 'are taken beside html, markdown or an s3:// page; a page on the web loads its own',
    })
  if (i.stylesheet !== undefined && i.markdown === undefined && !(i.url?.startsWith('s3://') && isMarkdownName(i.url)))
    problems.push({
      path: 'stylesheet',
      message: 'is taken with a Markdown page: markdown, or an s3:// document named .md or .markdown',
    })
  const seen = new Set<string>()
  i.assets?.forEach((a, n) => {
    const name = assetNameOf(a)
    if (name.split('/').some((seg) => seg === '' || seg === '.' || seg === '..' || seg.length > 255))
      problems.push({
        path: a.name === undefined ? `assets.${n}.url` : `assets.${n}.name`,
        message: 'must name a relative path without empty, "." or ".." segments (each at most 255 characters)',
      })
    if (seen.has(name)) problems.push({ path: `assets.${n}`, message: `names ${JSON.stringify(name)} twice` })
    seen.add(name)
  })
  return problems
}

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
  if (o.singlePage === true)
    for (const key of ['pageRanges', 'preferCSSPageSize'] as const)
      if (o[key] !== undefined) problems.push({ path: `pdfOptions.${key}`, message: 'is not taken with singlePage' })
  if (o.pdfua === true && o.tagged === false)
    problems.push({ path: 'pdfOptions.tagged', message: 'cannot be false with pdfua: an accessible PDF is tagged' })
  return problems
}

export const htmlPdf: UtilityDefinition = {
  slug: 'html-pdf',
  name: 'HTML to PDF',
  description:
    'Renders an HTML page (a public URL, an upload, or the page itself with its images, styles and fonts) or Markdown to PDF with page size, orientation, scale and margins.',
  category: 'pdf',
  icon: 'picture_as_pdf',
  target: 'pdf',
  maxDurationSeconds: 900,
  inputSchema: Type.Object(
    { ...PAGE_SOURCE, pdfOptions: Type.Optional(PdfOptionsSchema), ...PAGE_LOADING },
    { additionalProperties: false, description: 'The page as url, html or markdown (one of them).' },
  ),
  exampleInput: {
    url: 'https://example.com/invoice.html',
    pdfOptions: { format: 'A4', printBackground: true, margin: { top: '10mm', bottom: '10mm' } },
  },
  enabled: true,
  checkInput: checkHtmlPdf,
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
