import Type, { type TSchema } from 'typebox'
import { bookmarkCount, type BookmarkToWrite } from './outline.js'
import { PAGE_RANGES_PATTERN } from '../../contract/page-ranges.js'
import type { InputProblem, UtilityDefinition } from '../../contract/utility.js'
import { MAX_INPUT_URL_LENGTH, StorageOrHttpUrl } from '../../contract/url-schemas.js'
import { documentInfoSchema } from '../common/document-info-schema.js'
import { EDIT_PDF_LIMITS } from './limits.js'
import { STAMP_CHARACTERS } from './stamp-text.js'
import { passwordProblems, passwordSchema } from '../common/password-schema.js'

export { EDIT_PDF_LIMITS }

const pages = (what: string) =>
  Type.Optional(
    Type.String({
      maxLength: 200,
      pattern: PAGE_RANGES_PATTERN,
      description: `The pages to ${what}, e.g. "1-3,5" or "2-" (to the end); every page when absent.`,
    }),
  )

/** The edits, in the order they are applied (docs/api.md, edit-pdf). */
export const EDITS = [
  'flatten',
  'rotate',
  'stamp',
  'bookmarks',
  'attachments',
  'imageQuality',
  'maxImageResolution',
  'pdfa',
  'info',
  'pdfua',
  'compress',
  'linearize',
  'encrypt',
] as const

/**
 * Problems JSON Schema cannot express: at least one edit (a password alone removes the
 * protection), passwords within PDF's 127 bytes, an encryption with a password, and a stamp's
 * text in its character set.
 */
export function checkEditPdf(input: unknown): InputProblem[] {
  const i = input as {
    stamp?: { text?: string; image?: string; fontSize?: number; color?: string; scale?: number; opacity?: number }
    password?: string
    encrypt?: { userPassword?: string; ownerPassword?: string }
  } & Record<string, unknown>
  const problems: InputProblem[] = []
  if (!EDITS.some((e) => i[e] !== undefined && i[e] !== false) && i.password === undefined)
    problems.push({
      path: '',
      message: `names no edit: give at least one of ${EDITS.join(', ')}, or a password alone to remove the protection`,
    })
  problems.push(...passwordProblems(i.password, 'password'))
  const marks = i.bookmarks as BookmarkToWrite[] | undefined
  if (marks && bookmarkCount(marks) > EDIT_PDF_LIMITS.maxBookmarks)
    problems.push({
      path: 'bookmarks',
      message: `holds more than ${EDIT_PDF_LIMITS.maxBookmarks.toLocaleString('en')} bookmarks in all`,
    })
  if (i.encrypt) {
    problems.push(
      ...passwordProblems(i.encrypt.userPassword, 'encrypt.userPassword'),
      ...passwordProblems(i.encrypt.ownerPassword, 'encrypt.ownerPassword'),
    )
    if (!i.encrypt.userPassword && !i.encrypt.ownerPassword)
      problems.push({ path: 'encrypt', message: 'needs a userPassword, an ownerPassword or both' })
  }
  if (i.pdfa !== undefined) {
    if (i.encrypt)
      problems.push({ path: 'encrypt', message: 'cannot go with pdfa: an archival PDF (PDF/A) is never encrypted' })
    if (i.pdfa === 'PDF/A-1b' && i.stamp && (i.stamp.opacity ?? 0.5) < 1)
      problems.push({
        path: 'stamp.opacity',
        message:
          'must be 1 with PDF/A-1b, which has no transparency (each page stamped would become a picture): give opacity 1, or make PDF/A-2b',
      })
    if (i.attachments)
      problems.push({
        path: 'attachments',
        message:
          'cannot go with pdfa: an archival PDF as dutil writes it embeds no files (PDF/A-1 forbids them, PDF/A-2 takes PDF/A files only)',
      })
  }
  if (i.pdfua === true) {
    // Ghostscript's rewrite drops a PDF's tags; a stamp or flattened fields would be content no tag names.
    const clashes: Array<[string, string]> = [
      [
        'pdfa',
        "Ghostscript's rewrite drops the tags an accessible PDF needs (html-pdf and office-pdf make both at once)",
      ],
      ['imageQuality', "Ghostscript's rewrite drops the tags an accessible PDF needs"],
      ['maxImageResolution', "Ghostscript's rewrite drops the tags an accessible PDF needs"],
      ['stamp', 'a stamp is content no tag of the PDF names'],
      ['flatten', 'flattened fields become content no tag of the PDF names'],
      ['encrypt', 'make the PDF accessible first, then protect it in an edit of its own'],
    ]
    for (const [field, why] of clashes)
      if (i[field] !== undefined && i[field] !== false)
        problems.push({ path: field, message: `cannot go with pdfua: ${why}` })
  }
  const names = (i.attachments as Array<{ name?: string }> | undefined)?.map((a) => a.name).filter((n) => n)
  if (names && new Set(names).size !== names.length)
    problems.push({ path: 'attachments', message: 'names one file twice' })
  const stamp = i.stamp
  if (stamp) {
    if ((stamp.text === undefined) === (stamp.image === undefined))
      problems.push({ path: 'stamp', message: 'takes text or an image, one of the two' })
    if (stamp.text !== undefined && !STAMP_CHARACTERS.test(stamp.text))
      problems.push({
        path: 'stamp.text',
        message: 'takes letters of Western European languages (Windows-1252), digits, punctuation and spaces only',
      })
    if (stamp.image !== undefined)
      for (const field of ['fontSize', 'color'] as const)
        if (stamp[field] !== undefined)
          problems.push({ path: `stamp.${field}`, message: 'applies to a text stamp only' })
    if (stamp.text !== undefined && stamp.scale !== undefined)
      problems.push({ path: 'stamp.scale', message: 'applies to a picture only (a text has fontSize)' })
  }
  return problems
}

/**
 * A bookmark to write, with the bookmarks under it to `levels` levels in all (the schema spelled
 * out level by level: no recursive reference for the OpenAPI, the CRD or the clients to follow).
 * Each level is titled after its depth, so a generated client names its types Bookmark,
 * BookmarkLevel2 … rather than numbering look-alikes.
 */
function bookmarkSchema(levels: number, depth = 1): TSchema {
  return Type.Object(
    {
      title: Type.String({
        minLength: 1,
        maxLength: EDIT_PDF_LIMITS.maxBookmarkTitle,
        description: 'As readers show it.',
      }),
      page: Type.Integer({
        minimum: 1,
        maximum: EDIT_PDF_LIMITS.maxPages,
        description: 'The page it opens, from 1 (shown whole).',
      }),
      ...(levels > 1
        ? {
            children: Type.Optional(
              Type.Array(bookmarkSchema(levels - 1, depth + 1), {
                maxItems: EDIT_PDF_LIMITS.maxBookmarks,
                description: 'The bookmarks under it.',
              }),
            ),
          }
        : {}),
    },
    { additionalProperties: false, title: depth === 1 ? 'Bookmark' : `BookmarkLevel${depth}` },
  )
}

export const editPdf: UtilityDefinition = {
  slug: 'edit-pdf',
  name: 'Edit a PDF',
  description:
    'Edits one PDF with qpdf and Ghostscript: flattens its forms and annotations, turns pages, stamps or watermarks text or pictures on them, writes its document information, bookmarks and attachments, shrinks its pictures, makes it an archival PDF (PDF/A), compresses it losslessly, makes it fast to view on the web, and protects it with passwords and permissions or removes its protection (at most 150 MB and 2,000 pages).',
  category: 'pdf',
  icon: 'edit_document',
  target: 'pdf',
  maxDurationSeconds: 900,
  inputSchema: Type.Object(
    {
      url: StorageOrHttpUrl,
      flatten: Type.Optional(
        Type.Boolean({
          description:
            'Draws form fields and annotations into the pages: what they show stays, they can no longer be edited.',
        }),
      ),
      rotate: Type.Optional(
        Type.Object(
          {
            angle: Type.Union([Type.Literal(90), Type.Literal(180), Type.Literal(270)], {
              description: "Clockwise, added to the page's own rotation.",
            }),
            pages: pages('turn'),
          },
          { additionalProperties: false, description: 'Turns pages.' },
        ),
      ),
      stamp: Type.Optional(
        Type.Object(
          {
            text: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: EDIT_PDF_LIMITS.maxStampText,
                description:
                  'The text, one line (Windows-1252 characters: Western European letters). Give text or image.',
              }),
            ),
            image: Type.Optional(
              Type.String({
                maxLength: MAX_INPUT_URL_LENGTH,
                pattern: '^(https?|s3)://[^\\s]+$',
                description:
                  "A PNG or JPEG picture, or a PDF whose first page is the stamp (as it is drawn: scaled to the page, centred), by http(s):// URL or an upload's s3:// URL; at most 20 MB. Give text or image.",
              }),
            ),
            scale: Type.Optional(
              Type.Number({
                minimum: 0.05,
                maximum: 1,
                description: "A picture's longer side as a share of the page's shorter side. Default 0.5.",
              }),
            ),
            layer: Type.Optional(
              Type.Union([Type.Literal('over'), Type.Literal('under')], {
                description:
                  "over (a stamp, the default): on top of the page's content; under (a watermark): behind it, hidden where the page paints an opaque background.",
              }),
            ),
            pages: pages('stamp'),
            fontSize: Type.Optional(
              Type.Number({
                minimum: 6,
                maximum: 400,
                description:
                  'Points on a page 595 pt (A4) on its shorter side; the stamp scales with the page. Default 48.',
              }),
            ),
            angle: Type.Optional(
              Type.Number({
                minimum: -180,
                maximum: 180,
                description: 'Degrees, counter-clockwise, about the page centre. Default 0.',
              }),
            ),
            color: Type.Optional(
              Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: 'As #rrggbb. Default #808080 (grey).' }),
            ),
            opacity: Type.Optional(
              Type.Number({ minimum: 0.05, maximum: 1, description: 'From 0.05 to 1 (opaque). Default 0.5.' }),
            ),
          },
          {
            additionalProperties: false,
            description: 'Text (in Helvetica Bold), a picture or a PDF page laid across the middle of pages.',
          },
        ),
      ),
      info: Type.Optional(
        documentInfoSchema(
          "Document information to write, as PDF readers show it in its properties: the fields given replace the document's own, the others stay.",
        ),
      ),
      attachments: Type.Optional(
        Type.Array(
          Type.Object(
            {
              url: StorageOrHttpUrl,
              name: Type.Optional(
                Type.String({
                  minLength: 1,
                  maxLength: 255,
                  pattern: '^[^\\u0000-\\u001f\\u007f/\\\\]+$',
                  description: "Its file name in the PDF (no slashes); the URL's last segment when absent.",
                }),
              ),
              description: Type.Optional(
                Type.String({
                  maxLength: 1000,
                  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
                  description: 'As readers show it beside the file.',
                }),
              ),
              mimeType: Type.Optional(
                Type.String({
                  maxLength: 127,
                  pattern: '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$',
                  description: 'Its media type, as type/subtype (text/xml, image/png); none when absent.',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          {
            minItems: 1,
            maxItems: EDIT_PDF_LIMITS.maxAttachments,
            description: `Files embedded in the PDF (its attachments, as readers list them), by http(s):// URL or an upload's s3:// URL: at most ${EDIT_PDF_LIMITS.maxAttachments}, 50 MB each and 200 MB in all; one of the same name is replaced.`,
          },
        ),
      ),
      bookmarks: Type.Optional(
        Type.Array(bookmarkSchema(EDIT_PDF_LIMITS.maxBookmarkDepth), {
          maxItems: EDIT_PDF_LIMITS.maxBookmarks,
          description: `The PDF's outline, replacing its own ([] removes it): titles, the pages they open and the bookmarks under them (${EDIT_PDF_LIMITS.maxBookmarkDepth} levels, at most ${EDIT_PDF_LIMITS.maxBookmarks.toLocaleString('en')} in all).`,
        }),
      ),
      imageQuality: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 100,
          description:
            'Re-encodes the colour and grey pictures as JPEG of this quality, 1 to 100 (lower: a smaller file), with Ghostscript. Absent: pictures keep their encoding.',
        }),
      ),
      maxImageResolution: Type.Optional(
        Type.Union(
          [75, 150, 300, 600, 1200].map((dpi) => Type.Literal(dpi)),
          {
            description:
              'Scales colour and grey pictures down to at most this many dots per inch as they are drawn on the page (75, 150, 300, 600 or 1200), with Ghostscript; black-and-white pictures (scans of text) keep theirs. Absent: pictures keep their resolution.',
          },
        ),
      ),
      pdfa: Type.Optional(
        Type.Union([Type.Literal('PDF/A-1b'), Type.Literal('PDF/A-2b'), Type.Literal('PDF/A-3b')], {
          description:
            'Makes the PDF an archival PDF of this PDF/A level, with Ghostscript: fonts embedded, colours in sRGB, what the level forbids left out (embedded files, JavaScript; under PDF/A-1, which has no transparency, a page that uses it is drawn as a picture); its document information kept. A tagged PDF loses its tags. Not with encrypt or attachments.',
        }),
      ),
      pdfua: Type.Optional(
        Type.Boolean({
          description: `Makes a tagged PDF accessible (PDF/UA-1): its metadata declares it, readers show its title, its links are described. The PDF must be tagged (as html-pdf's tagged and office-pdf's pdfua make it) and state its language; its title is info.title or its own. At most ${EDIT_PDF_LIMITS.maxAccessibleBytes / 1024 ** 2} MB. Not with pdfa, imageQuality, maxImageResolution, stamp, flatten or encrypt.`,
        }),
      ),
      compress: Type.Optional(
        Type.Boolean({
          description:
            'Packs objects into compressed object streams and compresses every stream at the highest level, losslessly (pictures are kept as they are).',
        }),
      ),
      linearize: Type.Optional(
        Type.Boolean({
          description: 'Linearizes the PDF ("fast web view"): a browser shows its first page before the rest arrives.',
        }),
      ),
      encrypt: Type.Optional(
        Type.Object(
          {
            userPassword: Type.Optional(
              passwordSchema(
                'Asked for to open the PDF. Absent or empty: anyone may open it, and the permissions below still hold.',
                0,
              ),
            ),
            ownerPassword: Type.Optional(
              passwordSchema('Lifts the permissions (and opens the PDF). Absent: the same as userPassword.'),
            ),
            print: Type.Optional(
              Type.Union([Type.Literal('full'), Type.Literal('low'), Type.Literal('none')], {
                description: 'Printing allowed: full (the default), low (low resolution only) or none.',
              }),
            ),
            modify: Type.Optional(
              Type.Union(
                [
                  Type.Literal('all'),
                  Type.Literal('annotate'),
                  Type.Literal('form'),
                  Type.Literal('assembly'),
                  Type.Literal('none'),
                ],
                {
                  description:
                    'Changes allowed: all (the default); annotate (comments, form filling, pages inserted, turned or removed); form (form filling and page assembly); assembly (pages only); none.',
                },
              ),
            ),
            copy: Type.Optional(
              Type.Boolean({
                description:
                  'Whether text and pictures may be copied out (default true; accessibility tools always may).',
              }),
            ),
          },
          {
            additionalProperties: false,
            description:
              'Protects the edited PDF with AES-256 (PDF 2.0, readable by every current PDF reader): a password to open it, one that lifts its permissions, or both, and what it permits without the owner password.',
          },
        ),
      ),
      password: Type.Optional(
        passwordSchema(
          "Opens a protected PDF: its owner password (the one that lifts its permissions). The edited PDF is without protection unless `encrypt` protects it again; a password alone, with no edit, removes the protection. Sealed where the job's input is stored, used by its runner alone, never shown again.",
        ),
      ),
    },
    { additionalProperties: false },
  ),
  exampleInput: {
    url: 'https://example.com/contract.pdf',
    flatten: true,
    stamp: { text: 'DRAFT', angle: 45, layer: 'under' },
    info: { title: 'Contract (draft)' },
  },
  enabled: true,
  checkInput: checkEditPdf,
  runner: {
    image: 'dutil-runner-edit-pdf',
    entry: 'dist/runners/edit-pdf/bundle/main.js',
    // The main thread downloads, draws a stamp's page and uploads; qpdf edits in a process of its own.
    maxHeapMb: 192,
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    backoffLimit: 1,
    concurrency: 4,
    // The PDF, a stamp's page, and the edited PDF.
    scratchSizeLimit: '1Gi',
  },
}
