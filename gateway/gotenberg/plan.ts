import {
  parseDurationMs,
  cssInches,
  FormRefused,
  invalidField,
  naturalCompare,
  parseBool,
  parseInches,
  parseInteger,
  parseNumber,
  parseJsonField,
} from './form-values.js'
import { PAGE_RANGES_PATTERN } from '../../contract/page-ranges.js'

/**
 * What a request to one of Gotenberg's routes asks of dutil (docs/gotenberg.md): the dutil jobs
 * that do it, and how their outputs make the answer. A pure function of the form's fields and
 * files; everything it cannot do faithfully is refused naming the field or file, never ignored.
 */

export const GOTENBERG_ROUTES = {
  '/forms/chromium/convert/html': 'chromium-html',
  '/forms/chromium/convert/url': 'chromium-url',
  '/forms/chromium/screenshot/html': 'screenshot-html',
  '/forms/chromium/screenshot/url': 'screenshot-url',
  '/forms/libreoffice/convert': 'libreoffice',
  '/forms/pdfengines/merge': 'merge',
  '/forms/pdfengines/split': 'split',
  '/forms/pdfengines/flatten': 'flatten',
  '/forms/pdfengines/rotate': 'rotate',
  '/forms/pdfengines/metadata/write': 'metadata-write',
  '/forms/pdfengines/metadata/read': 'metadata-read',
  '/forms/pdfengines/bookmarks/read': 'bookmarks-read',
  '/forms/pdfengines/bookmarks/write': 'bookmarks-write',
  '/forms/pdfengines/watermark': 'watermark',
  '/forms/pdfengines/stamp': 'stamp',
  '/forms/pdfengines/encrypt': 'encrypt',
  '/forms/pdfengines/embed': 'embed',
  '/forms/pdfengines/convert': 'convert',
} as const
export type GotenbergRoute = (typeof GOTENBERG_ROUTES)[keyof typeof GOTENBERG_ROUTES]

/** A file of the form, stored as an upload of the caller: its name and its s3:// URL. */
export interface FormFile {
  /** The form field it came in (Gotenberg's clients name it `files`, or after the file). */
  field: string
  name: string
  url: string
}

/** One dutil job of a request. */
export interface PlannedRun {
  utility: 'html-pdf' | 'html-image' | 'office-pdf' | 'merge-pdf' | 'split-pdf' | 'edit-pdf' | 'pdf-info'
  input: Record<string, unknown>
  /** The name stem of its outputs in the answer (the input file's name without its extension). */
  stem: string
  /** Its outputs' extension in the answer when not `pdf` (a screenshot's format). */
  extension?: 'png' | 'jpeg' | 'webp'
  /** The input file's name as it came (a metadata answer is keyed by it). */
  name?: string
}

export interface Plan {
  runs: PlannedRun[]
  /** The runs' PDFs merged into one, in order, by one more job (LibreOffice's `merge`). */
  merge: boolean
  /**
   * How an output is named in the answer: `stem` of its run, its index among the run's outputs
   * and how many there are. A single output keeps `<stem>.pdf`; split pages are `<stem>_<i>.pdf`.
   */
  split: boolean
  /**
   * The answer is JSON keyed by file name, not the runs' files: their facts (metadata read), or
   * the bookmarks each run stored (bookmarks read).
   */
  facts?: 'metadata' | 'bookmarks'
}

/** Office formats office-pdf converts, by extension (LibreOffice's route picks files by extension too). */
export const OFFICE_EXTENSIONS = [
  '.docx',
  '.doc',
  '.odt',
  '.fodt',
  '.rtf',
  '.txt',
  '.xlsx',
  '.xls',
  '.ods',
  '.fods',
  '.csv',
  '.pptx',
  '.ppt',
  '.odp',
  '.fodp',
]

type Fields = ReadonlyMap<string, string>

/**
 * Gotenberg's fields dutil does not offer, with the value each has when not given: a request may
 * send one at that value (some clients send every option), any other is refused naming it.
 * Strings default to empty (Gotenberg reads an empty value as "not given").
 */
const DEFAULT_ONLY: Record<string, boolean | number | string> = {
  // Chromium: waiting, network and page behaviour.
  skipNetworkIdleEvent: true,
  skipNetworkAlmostIdleEvent: true,
  failOnHttpStatusCodes: '[499,599]',
  failOnResourceHttpStatusCodes: '',
  ignoreResourceHttpStatusDomains: '',
  failOnResourceLoadingFailed: false,
  failOnConsoleExceptions: false,
  waitDelay: '',
  waitWindowStatus: '',
  waitForExpression: '',
  waitForSelector: '',
  cookies: '',
  userAgent: '',
  extraHttpHeaders: '',
  emulatedMediaType: '',
  emulatedMediaFeatures: '',
  nativePageRanges: '',
  generateDocumentOutline: false,
  generateTaggedPdf: false,
  // LibreOffice export options (the password: taken on the LibreOffice route).
  password: '',
  updateIndexes: true,
  allowDuplicateFieldNames: false,
  exportBookmarksToPdfDestination: false,
  exportPlaceholders: false,
  exportNotesPages: false,
  exportOnlyNotesPages: false,
  exportNotesInMargin: false,
  convertOooTargetToPdfTarget: false,
  exportLinksRelativeFsys: false,
  exportHiddenSlides: false,
  skipEmptyPages: false,
  addOriginalDocumentAsStream: false,
  initialView: 0,
  initialPage: 1,
  magnification: 0,
  zoom: 100,
  pageLayout: 0,
  firstPageOnLeft: false,
  resizeWindowToInitialPage: false,
  centerWindow: false,
  openInFullScreenMode: false,
  displayPDFDocumentTitle: true,
  hideViewerMenubar: false,
  hideViewerToolbar: false,
  hideViewerWindowControls: false,
  useTransitionEffects: true,
  openBookmarkLevels: -1,
  nativeWatermarkText: '',
  nativeWatermarkColor: 8388223,
  nativeWatermarkFontHeight: 0,
  nativeWatermarkRotateAngle: 0,
  nativeWatermarkFontName: 'Helvetica',
  nativeTiledWatermarkText: '',
  nativePdfFormats: true,
  // PDF engines: what Gotenberg does to a PDF after converting it (or to the PDFs it is given).
  pdfa: '',
  pdfua: false,
  metadata: '',
  flatten: false,
  autoIndexBookmarks: false,
  titleBookmarks: false,
  bookmarks: '',
  userPassword: '',
  ownerPassword: '',
  allowPrinting: true,
  allowCopying: true,
  allowModifying: true,
  allowAnnotating: true,
  allowFillingForms: true,
  allowAssembling: true,
  splitMode: '',
  splitSpan: '',
  splitUnify: false,
  rotateAngle: '',
  rotatePages: '',
  optimizeImages: false,
  imageQuality: '',
  embedsMetadata: '',
  watermarkSource: '',
  watermarkExpression: '',
  watermarkPages: '',
  watermarkOptions: '',
  stampSource: '',
  stampExpression: '',
  stampPages: '',
  stampOptions: '',
  facturxConformanceLevel: '',
  facturxDocumentType: '',
  facturxVersion: '1.0',
}

/** Whether `value` is the field's value when not given. */
function isDefault(field: string, value: string, byDefault: boolean | number | string): boolean {
  if (typeof byDefault === 'boolean') return parseBool(field, value) === byDefault
  if (typeof byDefault === 'number') return parseNumber(field, value) === byDefault
  if (field === 'failOnHttpStatusCodes') return value.replace(/\s+/g, '') === byDefault
  return value === byDefault
}

/**
 * The fields a request gives (an empty value is not given), each either taken by `takes` or at
 * its default; anything else is refused naming it.
 */
function checkFields(fields: Fields, takes: ReadonlySet<string>): Map<string, string> {
  const given = new Map<string, string>()
  for (const [field, value] of fields) {
    if (value === '') continue
    if (takes.has(field)) {
      given.set(field, value)
      continue
    }
    if (!(field in DEFAULT_ONLY))
      throw new FormRefused(field, `form field '${clip(field)}' is not one this route takes`)
    if (!isDefault(field, value, DEFAULT_ONLY[field]))
      throw new FormRefused(
        field,
        `form field '${field}' is not supported by dutil (only its default, ${JSON.stringify(DEFAULT_ONLY[field])}, is taken)`,
      )
  }
  return given
}

/** LibreOffice's export options office-pdf offers, by Gotenberg's field name. */
const OFFICE_SWITCHES: Record<string, string> = {
  exportBookmarks: 'exportBookmarks',
  exportNotes: 'exportNotes',
  exportFormFields: 'exportFormFields',
  singlePageSheets: 'singlePageSheets',
  losslessImageCompression: 'losslessImages',
}
const OFFICE_EXPORT_FIELDS = [...Object.keys(OFFICE_SWITCHES), 'quality', 'reduceImageResolution', 'maxImageResolution']
const IMAGE_RESOLUTIONS = new Set([75, 150, 300, 600, 1200])

/**
 * LibreOffice's export options as office-pdf's input: the switches by name, `quality` as the
 * pictures' JPEG quality, and `maxImageResolution` (300 unless given) only where
 * `reduceImageResolution` is true, as Gotenberg applies it.
 */
function officeExportOf(given: Map<string, string>): Record<string, unknown> {
  const input: Record<string, unknown> = {}
  for (const [field, key] of Object.entries(OFFICE_SWITCHES)) {
    const v = given.get(field)
    if (v !== undefined) input[key] = parseBool(field, v)
  }
  const quality = given.get('quality')
  if (quality !== undefined) {
    const q = parseInteger('quality', quality)
    if (q < 1 || q > 100)
      throw new FormRefused('quality', `form field 'quality' is invalid (got '${clip(quality)}'): from 1 to 100`)
    input.imageQuality = q
  }
  const resolution = given.get('maxImageResolution')
  const dpi = resolution === undefined ? 300 : parseInteger('maxImageResolution', resolution)
  if (!IMAGE_RESOLUTIONS.has(dpi))
    throw new FormRefused(
      'maxImageResolution',
      `form field 'maxImageResolution' is invalid (got '${clip(resolution ?? '')}'): 75, 150, 300, 600 or 1200`,
    )
  const reduce = given.get('reduceImageResolution')
  if (reduce !== undefined && parseBool('reduceImageResolution', reduce)) input.maxImageResolution = dpi
  return input
}

/** Gotenberg's metadata keys dutil writes, as merge-pdf's `info` keys. */
const INFO_KEYS: Record<string, string> = {
  Title: 'title',
  Author: 'author',
  Subject: 'subject',
  Keywords: 'keywords',
  Creator: 'creator',
  Producer: 'producer',
}

/**
 * The `metadata` field (JSON, as Gotenberg takes it) as merge-pdf's `info`: text values of the
 * keys dutil writes (Keywords a list or one text); any other key (dates, Trapped, …) is refused
 * naming it. The values' bounds are the schema's.
 */
function documentInfoOf(metadata: string): Record<string, unknown> | undefined {
  const invalid = (why: string) => invalidField('metadata', why)
  const parsed = parseJsonField('metadata', metadata)
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid('not a JSON object')
  const info: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(parsed)) {
    const name = INFO_KEYS[key]
    if (!name) throw invalid(`dutil writes ${Object.keys(INFO_KEYS).join(', ')}; not ${clip(key)}`)
    if (name === 'keywords' && Array.isArray(value) && value.every((v) => typeof v === 'string')) info.keywords = value
    else if (typeof value === 'string') info[name] = name === 'keywords' ? [value] : value
    else throw invalid(`${key} must be text`)
  }
  return Object.keys(info).length ? info : undefined
}

/**
 * Gotenberg's bookmarks to write: a list for every PDF of the request, or lists keyed by file
 * name. Each bookmark's shape is edit-pdf's own, checked by its schema when the job is accepted.
 */
function bookmarksOf(value: string): unknown[] | Record<string, unknown[]> {
  const invalid = (why: string) => invalidField('bookmarks', why)
  const parsed = parseJsonField('bookmarks', value)
  if (Array.isArray(parsed)) return parsed
  if (!parsed || typeof parsed !== 'object') throw invalid('a list of bookmarks, or lists of them keyed by file name')
  for (const [name, list] of Object.entries(parsed))
    if (!Array.isArray(list)) throw invalid(`the bookmarks of '${clip(name)}' are not a list`)
  return parsed as Record<string, unknown[]>
}

/**
 * Gotenberg's embedsMetadata: per file to embed (by its name), its `mimeType`; the PDF/A-3
 * `relationship` is refused (qpdf writes no AFRelationship), as is metadata for a file not sent.
 */
function embedsMetadataOf(value: string | undefined, embeds: readonly FormFile[]): Map<string, { mimeType?: string }> {
  const out = new Map<string, { mimeType?: string }>()
  if (value === undefined) return out
  const parsed = parseJsonField('embedsMetadata', value)
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalidField('embedsMetadata', 'an object keyed by the names of the files to embed')
  for (const [name, entry] of Object.entries(parsed)) {
    if (!embeds.some((e) => e.name === name))
      throw invalidField('embedsMetadata', `'${clip(name)}' is no file of the request's embeds`)
    if (!entry || typeof entry !== 'object' || Array.isArray(entry))
      throw invalidField('embedsMetadata', `the metadata of '${clip(name)}' is not an object`)
    const { mimeType, ...rest } = entry as Record<string, unknown>
    const other = Object.keys(rest)[0]
    if (other !== undefined)
      throw new FormRefused(
        'embedsMetadata',
        `form field 'embedsMetadata' is not supported by dutil with '${clip(other)}' (only mimeType is taken)`,
      )
    if (mimeType !== undefined && typeof mimeType !== 'string')
      throw invalidField('embedsMetadata', `the mimeType of '${clip(name)}' is not a text`)
    out.set(name, mimeType ? { mimeType } : {})
  }
  return out
}

const CHROMIUM_FIELDS = [
  'nativePageRanges',
  'emulatedMediaType',
  'waitDelay',
  'waitForSelector',
  'waitForExpression',
  'generateTaggedPdf',
  'generateDocumentOutline',
  'pdfa',
  'pdfua',
  'singlePage',
  'omitBackground',
  'paperWidth',
  'paperHeight',
  'marginTop',
  'marginBottom',
  'marginLeft',
  'marginRight',
  'landscape',
  'printBackground',
  'scale',
  'preferCssPageSize',
]

/** The header and footer templates a Chromium request gave as header.html and footer.html files. */
export interface Templates {
  header?: string
  footer?: string
}

/** Chromium's print options: Gotenberg's defaults (Letter, 0.39 in margins) unless given. */
function pdfOptionsOf(given: Map<string, string>, templates?: Templates): Record<string, unknown> {
  const inches = (field: string, byDefault: number) => {
    const v = given.get(field)
    return cssInches(v === undefined ? byDefault : parseInches(field, v))
  }
  const options: Record<string, unknown> = {
    width: inches('paperWidth', 8.5),
    height: inches('paperHeight', 11),
    margin: {
      top: inches('marginTop', 0.39),
      bottom: inches('marginBottom', 0.39),
      left: inches('marginLeft', 0.39),
      right: inches('marginRight', 0.39),
    },
  }
  const bool = (field: string, key: string) => {
    const v = given.get(field)
    if (v !== undefined) options[key] = parseBool(field, v)
  }
  bool('landscape', 'landscape')
  bool('printBackground', 'printBackground')
  bool('preferCssPageSize', 'preferCSSPageSize')
  const ranges = given.get('nativePageRanges')
  if (ranges !== undefined) {
    if (!new RegExp(PAGE_RANGES_PATTERN).test(ranges))
      throw new FormRefused(
        'nativePageRanges',
        `form field 'nativePageRanges' is invalid (got '${clip(ranges)}'): pages and ranges separated by commas, such as 1-5, 8, 11-13`,
      )
    options.pageRanges = ranges
  }
  bool('generateTaggedPdf', 'tagged')
  bool('generateDocumentOutline', 'outline')
  const pdfa = given.get('pdfa')
  if (pdfa !== undefined) {
    if (pdfa === 'PDF/A-1b')
      throw new FormRefused(
        'pdfa',
        "form field 'pdfa' is not supported by dutil with 'PDF/A-1b' on Chromium's routes (its pages use transparency, which PDF/A-1 lacks): PDF/A-2b or PDF/A-3b",
      )
    if (pdfa !== 'PDF/A-2b' && pdfa !== 'PDF/A-3b')
      throw new FormRefused('pdfa', `form field 'pdfa' is invalid (got '${clip(pdfa)}'): PDF/A-2b or PDF/A-3b`)
    options.pdfa = pdfa
  }
  bool('pdfua', 'pdfua')
  bool('singlePage', 'singlePage')
  bool('omitBackground', 'omitBackground')
  if (templates?.header !== undefined) options.headerTemplate = templates.header
  if (templates?.footer !== undefined) options.footerTemplate = templates.footer
  const scale = given.get('scale')
  if (scale !== undefined) {
    const n = parseNumber('scale', scale)
    if (n < 0.1 || n > 2)
      throw new FormRefused('scale', `form field 'scale' is invalid (got '${scale}'): from 0.1 to 2`)
    options.scale = n
  }
  return options
}

/** What the page does before it is printed: its media type and its waits. */
function pageOf(given: Map<string, string>): Record<string, unknown> {
  const page: Record<string, unknown> = {}
  const media = given.get('emulatedMediaType')
  if (media !== undefined) {
    if (media !== 'print' && media !== 'screen')
      throw new FormRefused(
        'emulatedMediaType',
        `form field 'emulatedMediaType' is invalid (got '${clip(media)}'): print or screen`,
      )
    page.media = media
  }
  const wait: Record<string, unknown> = {}
  const selector = given.get('waitForSelector')
  if (selector !== undefined) wait.selector = selector
  const expression = given.get('waitForExpression')
  if (expression !== undefined) wait.expression = expression
  const delay = given.get('waitDelay')
  if (delay !== undefined) wait.delayMs = parseDurationMs('waitDelay', delay)
  if (Object.keys(wait).length) page.wait = wait
  return page
}

/** The screenshot routes' own fields, beside the page's media type and waits. */
const SCREENSHOT_FIELDS = [
  'width',
  'height',
  'clip',
  'selector',
  'format',
  'quality',
  'omitBackground',
  'optimizeForSpeed',
  'deviceScaleFactor',
  'emulatedMediaType',
  'waitDelay',
  'waitForSelector',
  'waitForExpression',
]
const IMAGE_FORMATS = new Set(['png', 'jpeg', 'webp'])

/**
 * A screenshot's fields as html-image's `imageOptions`, with Gotenberg's defaults: an 800 × 600
 * viewport, png, the whole page unless `clip` (the viewport) or `selector` (one element) says
 * otherwise, quality 100 for jpeg and webp. Where Gotenberg ignores a field (quality for png, a
 * transparent background for jpeg) it is ignored here too.
 */
function imageOptionsOf(given: Map<string, string>): { options: Record<string, unknown>; format: string } {
  const format = given.get('format') ?? 'png'
  if (!IMAGE_FORMATS.has(format))
    throw new FormRefused('format', `form field 'format' is invalid (got '${clip(format)}'): png, jpeg or webp`)
  const within = (field: string, byDefault: number, min: number, max: number) => {
    const v = given.get(field)
    const n = v === undefined ? byDefault : parseInteger(field, v)
    if (n < min || n > max)
      throw new FormRefused(field, `form field '${field}' is invalid (got '${clip(v ?? '')}'): from ${min} to ${max}`)
    return n
  }
  const options: Record<string, unknown> = {
    format,
    width: within('width', 800, 16, 3840),
    height: within('height', 600, 16, 16_384),
  }
  if (format !== 'png') options.quality = within('quality', 100, 0, 100)
  const scale = given.get('deviceScaleFactor')
  if (scale !== undefined) {
    const n = parseNumber('deviceScaleFactor', scale)
    if (n < 0.25 || n > 4)
      throw new FormRefused(
        'deviceScaleFactor',
        `form field 'deviceScaleFactor' is invalid (got '${clip(scale)}'): from 0.25 to 4`,
      )
    options.deviceScaleFactor = n
  }
  const selector = given.get('selector')
  const clipped = given.has('clip') && parseBool('clip', given.get('clip')!)
  if (selector !== undefined) options.selector = selector
  else if (!clipped) options.fullPage = true
  const omit = given.get('omitBackground')
  if (omit !== undefined && parseBool('omitBackground', omit) && format !== 'jpeg') options.omitBackground = true
  const fast = given.get('optimizeForSpeed')
  if (fast !== undefined && parseBool('optimizeForSpeed', fast)) options.optimizeForSpeed = true
  return { options, format }
}

const PDFA_LEVELS = new Set(['PDF/A-1b', 'PDF/A-2b', 'PDF/A-3b'])

/** A Chromium html route's page: its `index.html` file, every other file an asset it refers to by name. */
function htmlPageOf(files: readonly FormFile[]): Record<string, unknown> {
  const page = files.find((f) => f.name.toLowerCase() === 'index.html')
  if (!page) throw new FormRefused('index.html', "form file 'index.html' is required")
  const assets = files.filter((f) => f !== page)
  return { url: page.url, ...(assets.length ? { assets: assets.map((a) => ({ url: a.url, name: a.name })) } : {}) }
}

/** A Chromium url route's page: its `url` field, and no files. */
function urlPageOf(given: Map<string, string>, files: readonly FormFile[]): Record<string, unknown> {
  const url = given.get('url')
  if (url === undefined) throw new FormRefused('url', "form field 'url' is required")
  if (files.length) throw new FormRefused(files[0].name, 'this route takes a url and no files')
  return { url }
}

/** The plan of one request, or a FormRefused / FieldValueError naming what cannot be done. */
export function planOf(route: GotenbergRoute, fields: Fields, files: readonly FormFile[], templates?: Templates): Plan {
  for (const f of files) {
    // The mark of the watermark and stamp routes is a file of their own, the embed route's files
    // to embed too; nowhere else.
    if (f.field === route && (route === 'watermark' || route === 'stamp')) continue
    if (f.field === 'embeds' && route === 'embed') continue
    if (['watermark', 'stamp', 'embeds', 'facturxXml'].includes(f.field))
      throw new FormRefused(f.field, `the '${f.field}' file of Gotenberg's PDF engines is not supported by dutil`)
  }
  switch (route) {
    case 'chromium-html': {
      const given = checkFields(fields, new Set(CHROMIUM_FIELDS))
      return {
        runs: [
          {
            utility: 'html-pdf',
            input: { ...htmlPageOf(files), pdfOptions: pdfOptionsOf(given, templates), ...pageOf(given) },
            stem: 'index',
          },
        ],
        merge: false,
        split: false,
      }
    }
    case 'chromium-url': {
      const given = checkFields(fields, new Set(['url', ...CHROMIUM_FIELDS]))
      return {
        runs: [
          {
            utility: 'html-pdf',
            input: { ...urlPageOf(given, files), pdfOptions: pdfOptionsOf(given, templates), ...pageOf(given) },
            stem: 'result',
          },
        ],
        merge: false,
        split: false,
      }
    }
    case 'screenshot-html':
    case 'screenshot-url': {
      const byUrl = route === 'screenshot-url'
      const given = checkFields(fields, new Set([...(byUrl ? ['url'] : []), ...SCREENSHOT_FIELDS]))
      const { options, format } = imageOptionsOf(given)
      const source = byUrl ? urlPageOf(given, files) : htmlPageOf(files)
      return {
        runs: [
          {
            utility: 'html-image',
            input: { ...source, imageOptions: options, ...pageOf(given) },
            stem: byUrl ? 'result' : 'index',
            extension: format as PlannedRun['extension'],
          },
        ],
        merge: false,
        split: false,
      }
    }
    case 'libreoffice': {
      const given = checkFields(
        fields,
        new Set(['landscape', 'nativePageRanges', 'pdfa', 'pdfua', 'merge', 'password', ...OFFICE_EXPORT_FIELDS]),
      )
      const documents = sortedFiles(
        files,
        OFFICE_EXTENSIONS,
        'an office document (' + OFFICE_EXTENSIONS.join(', ') + ')',
      )
      const input: Record<string, unknown> = {}
      const landscape = given.get('landscape')
      if (landscape !== undefined) input.landscape = parseBool('landscape', landscape)
      const ranges = given.get('nativePageRanges')
      if (ranges !== undefined) input.pageRanges = ranges
      const pdfa = given.get('pdfa')
      if (pdfa !== undefined) {
        if (!PDFA_LEVELS.has(pdfa))
          throw new FormRefused(
            'pdfa',
            `form field 'pdfa' is invalid (got '${clip(pdfa)}'): PDF/A-1b, PDF/A-2b or PDF/A-3b`,
          )
        input.pdfa = pdfa
      }
      const pdfua = given.get('pdfua')
      if (pdfua !== undefined && parseBool('pdfua', pdfua)) input.pdfua = true
      // The password that opens protected documents (every document of the request, as on
      // Gotenberg): sealed as any password is once the job is accepted; empty is none.
      const password = given.get('password')
      if (password) input.password = password
      Object.assign(input, officeExportOf(given))
      const merge = given.get('merge') !== undefined && parseBool('merge', given.get('merge')!)
      return {
        runs: documents.map((d) => ({ utility: 'office-pdf', input: { url: d.url, ...input }, stem: stemOf(d.name) })),
        merge: merge && documents.length > 1,
        split: false,
      }
    }
    case 'merge': {
      const given = checkFields(fields, new Set(['metadata']))
      const pdfs = sortedFiles(files, ['.pdf'], 'a PDF (.pdf)')
      if (pdfs.length < 2) throw new FormRefused('files', 'merging takes at least two PDF files')
      const metadata = given.get('metadata')
      const info = metadata === undefined ? undefined : documentInfoOf(metadata)
      return {
        runs: [
          {
            utility: 'merge-pdf',
            input: { files: pdfs.map((p) => ({ url: p.url })), ...(info ? { info } : {}) },
            stem: 'merged',
          },
        ],
        merge: false,
        split: false,
      }
    }
    case 'flatten':
    case 'rotate':
    case 'metadata-write':
    case 'watermark':
    case 'stamp':
    case 'encrypt':
    case 'convert': {
      const mark = files.filter((f) => f.field === route)
      const edit = editOf(route, fields, mark)
      const pdfs = sortedFiles(
        files.filter((f) => f.field !== route),
        ['.pdf'],
        'a PDF (.pdf)',
      )
      return {
        runs: pdfs.map((p) => ({ utility: 'edit-pdf', input: { url: p.url, ...edit }, stem: stemOf(p.name) })),
        merge: false,
        split: false,
      }
    }
    case 'embed': {
      const given = checkFields(fields, new Set(['embedsMetadata']))
      const embeds = files.filter((f) => f.field === 'embeds')
      if (embeds.length === 0) throw new FormRefused('embeds', 'embedding takes at least one form file named embeds')
      const metadata = embedsMetadataOf(given.get('embedsMetadata'), embeds)
      const attachments = embeds.map((e) => ({ url: e.url, name: e.name, ...metadata.get(e.name) }))
      const pdfs = sortedFiles(
        files.filter((f) => f.field !== 'embeds'),
        ['.pdf'],
        'a PDF (.pdf)',
      )
      return {
        runs: pdfs.map((p) => ({ utility: 'edit-pdf', input: { url: p.url, attachments }, stem: stemOf(p.name) })),
        merge: false,
        split: false,
      }
    }
    case 'bookmarks-write': {
      const given = checkFields(fields, new Set(['bookmarks']))
      const value = given.get('bookmarks')
      if (value === undefined) throw new FormRefused('bookmarks', "form field 'bookmarks' is required")
      const bookmarks = bookmarksOf(value)
      const pdfs = sortedFiles(files, ['.pdf'], 'a PDF (.pdf)')
      return {
        runs: pdfs.map((p) => {
          const own = Array.isArray(bookmarks) ? bookmarks : bookmarks[p.name]
          if (own === undefined)
            throw new FormRefused('bookmarks', `form field 'bookmarks' names no bookmarks for '${clip(p.name)}'`)
          return { utility: 'edit-pdf', input: { url: p.url, bookmarks: own }, stem: stemOf(p.name) }
        }),
        merge: false,
        split: false,
      }
    }
    case 'metadata-read':
    case 'bookmarks-read': {
      checkFields(fields, new Set())
      const pdfs = sortedFiles(files, ['.pdf'], 'a PDF (.pdf)')
      const bookmarks = route === 'bookmarks-read'
      return {
        runs: pdfs.map((p) => ({
          utility: 'pdf-info',
          input: { url: p.url, ...(bookmarks ? { bookmarks: true } : {}) },
          stem: stemOf(p.name),
          name: p.name,
        })),
        merge: false,
        split: false,
        facts: bookmarks ? 'bookmarks' : 'metadata',
      }
    }
    case 'split': {
      const given = checkFields(fields, new Set(['splitMode', 'splitSpan', 'splitUnify']))
      const mode = given.get('splitMode')
      if (mode === undefined) throw new FormRefused('splitMode', "form field 'splitMode' is required")
      const span = (given.get('splitSpan') ?? '').replace(/\s+/g, '')
      if (span === '') throw new FormRefused('splitSpan', "form field 'splitSpan' is required")
      if (mode !== 'intervals' && mode !== 'pages')
        throw new FormRefused(
          'splitMode',
          `form field 'splitMode' is invalid (got '${clip(mode)}'): intervals or pages`,
        )
      const unify = given.has('splitUnify') && parseBool('splitUnify', given.get('splitUnify')!)
      let how: Record<string, unknown>
      if (mode === 'intervals') {
        if (unify) throw new FormRefused('splitUnify', "form field 'splitUnify' is only for splitMode pages")
        const every = parseInteger('splitSpan', span)
        if (every < 1)
          throw new FormRefused('splitSpan', `form field 'splitSpan' is invalid (got '${clip(span)}'): 1 or more`)
        how = every === 1 ? {} : { every }
      } else {
        if (!new RegExp(PAGE_RANGES_PATTERN).test(span))
          throw new FormRefused(
            'splitSpan',
            `form field 'splitSpan' is invalid (got '${clip(span)}'): pages and ranges separated by commas, such as 1-3,5 or 4-`,
          )
        how = { pages: span, ...(unify ? { unify: true } : {}) }
      }
      const pdfs = sortedFiles(files, ['.pdf'], 'a PDF (.pdf)')
      return {
        runs: pdfs.map((p) => ({ utility: 'split-pdf', input: { url: p.url, ...how }, stem: stemOf(p.name) })),
        merge: false,
        // One file per input with unify: named after its input, as Gotenberg names it.
        split: !unify,
      }
    }
  }
}

/** What Gotenberg's one-edit routes ask of edit-pdf, from their fields: an edit for each PDF of the request. */
function editOf(
  route: 'flatten' | 'rotate' | 'metadata-write' | 'watermark' | 'stamp' | 'encrypt' | 'convert',
  fields: Fields,
  /** The watermark or stamp route's own file (`watermark`, `stamp`): its picture or PDF. */
  mark: readonly FormFile[] = [],
): Record<string, unknown> {
  switch (route) {
    case 'encrypt':
      return { encrypt: encryptionOf(checkFields(fields, new Set(ENCRYPT_FIELDS))) }
    case 'watermark':
    case 'stamp': {
      // A text, a picture or a PDF's first page across the pages: behind their content (a
      // watermark) or over it (a stamp), in edit-pdf's look (text: Helvetica Bold 48 pt, grey,
      // half opaque, at 45°; a picture: half the page's shorter side, half opaque; a PDF page as
      // it is drawn); Gotenberg's engine options are not taken.
      const f = (name: string) => `${route}${name}`
      const given = checkFields(fields, new Set([f('Source'), f('Expression'), f('Pages'), f('Options')]))
      const source = given.get(f('Source'))
      if (source === undefined) throw new FormRefused(f('Source'), `form field '${f('Source')}' is required`)
      if (source !== 'text' && source !== 'image' && source !== 'pdf')
        throw new FormRefused(
          f('Source'),
          `form field '${f('Source')}' is invalid (got '${clip(source)}'): text, image or pdf`,
        )
      let drawn: Record<string, unknown>
      if (source === 'text') {
        const text = given.get(f('Expression'))
        if (text === undefined) throw new FormRefused(f('Expression'), `form field '${f('Expression')}' is required`)
        if (mark.length) throw new FormRefused(route, `the '${route}' file is for an image or pdf ${route}`)
        drawn = { text, angle: 45 }
      } else {
        if (mark.length !== 1)
          throw new FormRefused(route, `a ${source} ${route} takes its file as one form file named '${route}'`)
        drawn = { image: mark[0]!.url }
      }
      const options = given.get(f('Options'))
      if (options !== undefined && options.replace(/\s+/g, '') !== '{}')
        throw new FormRefused(
          f('Options'),
          `form field '${f('Options')}' is not supported by dutil (edit-pdf's stamp takes size, angle, colour and opacity)`,
        )
      const pages = (given.get(f('Pages')) ?? '').replace(/\s+/g, '')
      if (pages !== '' && !new RegExp(PAGE_RANGES_PATTERN).test(pages))
        throw new FormRefused(
          f('Pages'),
          `form field '${f('Pages')}' is invalid (got '${clip(pages)}'): pages and ranges separated by commas, such as 1-3,5 or 4-`,
        )
      return {
        stamp: { ...drawn, layer: route === 'watermark' ? 'under' : 'over', ...(pages ? { pages } : {}) },
      }
    }
    case 'flatten':
      checkFields(fields, new Set())
      return { flatten: true }
    case 'convert': {
      // An existing PDF made archival (edit-pdf's pdfa, by Ghostscript) or, when tagged,
      // accessible (edit-pdf's pdfua); not both: Ghostscript's rewrite drops the tags.
      const given = checkFields(fields, new Set(['pdfa', 'pdfua']))
      const pdfua = given.has('pdfua') && parseBool('pdfua', given.get('pdfua')!)
      const pdfa = given.get('pdfa')
      if (pdfa !== undefined && !PDFA_LEVELS.has(pdfa))
        throw new FormRefused(
          'pdfa',
          `form field 'pdfa' is invalid (got '${clip(pdfa)}'): PDF/A-1b, PDF/A-2b or PDF/A-3b`,
        )
      if (pdfa !== undefined && pdfua)
        throw new FormRefused(
          'pdfua',
          "form field 'pdfua' is not supported by dutil together with 'pdfa' on an existing PDF (Ghostscript's rewrite drops the tags PDF/UA needs): convert to one of the two",
        )
      if (pdfa === undefined && !pdfua) throw new FormRefused('pdfa', "either form field 'pdfa' or 'pdfua' is required")
      return pdfa !== undefined ? { pdfa } : { pdfua: true }
    }
    case 'rotate': {
      const given = checkFields(fields, new Set(['rotateAngle', 'rotatePages']))
      const angle = given.get('rotateAngle')
      if (angle === undefined) throw new FormRefused('rotateAngle', "form field 'rotateAngle' is required")
      const degrees = parseInteger('rotateAngle', angle)
      if (degrees !== 90 && degrees !== 180 && degrees !== 270)
        throw new FormRefused(
          'rotateAngle',
          `form field 'rotateAngle' is invalid (got '${clip(angle)}'): 90, 180 or 270`,
        )
      const pages = (given.get('rotatePages') ?? '').replace(/\s+/g, '')
      if (pages !== '' && !new RegExp(PAGE_RANGES_PATTERN).test(pages))
        throw new FormRefused(
          'rotatePages',
          `form field 'rotatePages' is invalid (got '${clip(pages)}'): pages and ranges separated by commas, such as 1-3,5 or 4-`,
        )
      return { rotate: { angle: degrees, ...(pages ? { pages } : {}) } }
    }
    case 'metadata-write': {
      const given = checkFields(fields, new Set(['metadata']))
      const metadata = given.get('metadata')
      if (metadata === undefined) throw new FormRefused('metadata', "form field 'metadata' is required")
      const info = documentInfoOf(metadata)
      if (!info) throw invalidField('metadata', 'it names nothing to write')
      return { info }
    }
  }
}

const ALLOW_FIELDS = [
  'allowPrinting',
  'allowCopying',
  'allowModifying',
  'allowAnnotating',
  'allowFillingForms',
  'allowAssembling',
] as const
const ENCRYPT_FIELDS = ['userPassword', 'ownerPassword', ...ALLOW_FIELDS]

/**
 * qpdf's change levels, each with what it allows (each level holds the ones after it): the
 * encryption allows the most that Gotenberg's flags allow, never a change a flag refused.
 */
const MODIFY_LEVELS: ReadonlyArray<[string, ReadonlyArray<(typeof ALLOW_FIELDS)[number]>]> = [
  ['all', ['allowModifying', 'allowAnnotating', 'allowFillingForms', 'allowAssembling']],
  ['annotate', ['allowAnnotating', 'allowFillingForms', 'allowAssembling']],
  ['form', ['allowFillingForms', 'allowAssembling']],
  ['assembly', ['allowAssembling']],
  ['none', []],
]

/**
 * edit-pdf's encryption from Gotenberg's encrypt fields: userPassword (required, as Gotenberg
 * asks), ownerPassword (the user password when absent), and the allow flags (true unless
 * given). A password's value is never repeated in a refusal.
 */
function encryptionOf(given: Map<string, string>): Record<string, unknown> {
  const userPassword = given.get('userPassword')
  if (userPassword === undefined) throw new FormRefused('userPassword', "form field 'userPassword' is required")
  const ownerPassword = given.get('ownerPassword')
  const allowed = (field: (typeof ALLOW_FIELDS)[number]) => !given.has(field) || parseBool(field, given.get(field)!)
  const modify = MODIFY_LEVELS.find(([, needs]) => needs.every(allowed))![0]
  return {
    userPassword,
    ...(ownerPassword === undefined ? {} : { ownerPassword }),
    print: allowed('allowPrinting') ? 'full' : 'none',
    modify,
    copy: allowed('allowCopying'),
  }
}

/** The request's documents in their natural name order; any other file is refused naming it. */
function sortedFiles(files: readonly FormFile[], extensions: readonly string[], what: string): FormFile[] {
  if (files.length === 0) throw new FormRefused('files', `form files are required: at least one ${what}`)
  for (const f of files)
    if (!extensions.includes(extensionOf(f.name)))
      throw new FormRefused(f.name, `form file '${clip(f.name)}' is not ${what}`)
  return [...files].sort((a, b) => naturalCompare(a.name, b.name))
}

const extensionOf = (name: string) => {
  const dot = name.lastIndexOf('.')
  return dot > 0 ? name.slice(dot).toLowerCase() : ''
}
const stemOf = (name: string) => {
  const dot = name.lastIndexOf('.')
  return dot > 0 ? name.slice(0, dot) : name
}
const clip = (value: string) => (value.length > 64 ? `${value.slice(0, 64)}…` : value)

export { FormRefused }
