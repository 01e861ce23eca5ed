import Type from 'typebox'
import { JOB_STATES } from './crd-schemas.js'

/** Schemas of what the API answers; they feed the OpenAPI document (and its tests). */

const Timestamp = Type.String({ format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' })
const Nullable = <T extends object>(s: T) => Type.Union([s as never, Type.Null()])
const JobStatus = Type.Union(JOB_STATES.map((s) => Type.Literal(s)))

export const FileReferenceSchema = Type.Object(
  {
    url: Type.String({ description: 'Download link, presigned; fetch the job again for a fresh one.' }),
    key: Type.String({ description: 'Storage key <utility>/<YYYY-MM-DD>/<job_id>/<file>.' }),
    name: Type.String(),
    size: Nullable(Type.Integer({ minimum: 0 })),
    contentType: Nullable(Type.String()),
    urlExpiresAt: Type.Optional(Timestamp),
    pageNumber: Type.Optional(Type.Integer({ minimum: 1, description: 'split-pdf only.' })),
    path: Type.Optional(Type.String({ description: 'unzip-files only: the entry path inside the zip.' })),
  },
  { $id: 'FileReference' },
)

const Ms = Nullable(Type.Integer({ minimum: 0 }))

export const JobSchema = Type.Object(
  {
    id: Type.String({ pattern: '^job_[0-9A-HJKMNP-TV-Z]{26}$' }),
    object: Type.Literal('job'),
    utility: Type.String(),
    mode: Type.Union([Type.Literal('sync'), Type.Literal('async')]),
    status: JobStatus,
    createdAt: Timestamp,
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    timings: Type.Object({ queueMs: Ms, upstreamMs: Ms, storageMs: Ms, totalMs: Ms }),
    progress: Nullable(
      Type.Object(
        {
          done: Type.Integer({ minimum: 0, description: 'Units done so far.' }),
          total: Nullable(Type.Integer({ minimum: 0, description: 'All units, once the utility knows them.' })),
          unit: Type.Union([Type.Literal('pages'), Type.Literal('entries'), Type.Literal('files')]),
          updatedAt: Timestamp,
        },
        {
          description:
            'Extension (additive within v1): how far the utility has got, as it reports it about once a second: split-pdf counts pages stored, merge-pdf pages merged (the total known at the end), unzip-files entries extracted, zip-files files added. Null for utilities that report none, and until the first report. Kept after the job finishes.',
        },
      ),
    ),
    metadata: Nullable(Type.Object({}, { additionalProperties: true })),
    result: Nullable(
      Type.Object(
        {
          files: Type.Array(Type.Ref('FileReference')),
          pageCount: Type.Optional(
            Type.Integer({
              description:
                'split-pdf, merge-pdf, office-pdf, edit-pdf; pdf-info unless the PDF needs a password to be read.',
            }),
          ),
          format: Type.Optional(
            Type.String({
              description: 'office-pdf: the document format found by its content (docx, xlsx, pptx, odt, …).',
            }),
          ),
          fileCount: Type.Optional(Type.Integer({ description: 'unzip-files.' })),
          width: Type.Optional(Type.Integer({ description: "html-image: the picture's width in pixels." })),
          height: Type.Optional(Type.Integer({ description: "html-image: the picture's height in pixels." })),
          ...Object.fromEntries(
            ['title', 'author', 'subject', 'keywords', 'creator', 'producer'].map((field) => [
              field,
              Type.Optional(
                Type.String({
                  description: `edit-pdf: the edited PDF's ${field} as readers show it in its properties${field === 'keywords' ? ' (comma-separated)' : ''}, when it has one; pdf-info: the PDF's.`,
                }),
              ),
            ]),
          ),
          pdfVersion: Type.Optional(
            Type.String({ description: 'pdf-info: the PDF version its header declares, such as "1.7".' }),
          ),
          encrypted: Type.Optional(
            Type.Boolean({
              description:
                'pdf-info: whether the PDF is encrypted (with or without a password to open it); edit-pdf: whether the edited PDF is (encrypt).',
            }),
          ),
          passwordRequired: Type.Optional(
            Type.Boolean({
              description:
                'pdf-info: whether the PDF needs a password to be read; when it does, only encrypted and linearized are known.',
            }),
          ),
          bookmarkCount: Type.Optional(
            Type.Integer({
              description: 'pdf-info with bookmarks: how many bookmarks the outline has (stored as bookmarks.json).',
            }),
          ),
          linearized: Type.Optional(
            Type.Boolean({ description: 'pdf-info: whether the PDF is linearized (fast web view).' }),
          ),
          created: Type.Optional(
            Type.String({
              description:
                'pdf-info: the creation date of its document information as ISO 8601 (no offset when the PDF gives none), when it is a date.',
            }),
          ),
          modified: Type.Optional(Type.String({ description: 'pdf-info: the modification date, as created.' })),
        },
        { additionalProperties: true },
      ),
    ),
    error: Nullable(
      Type.Object({ code: Type.String(), message: Type.String(), upstreamStatus: Type.Optional(Type.Integer()) }),
    ),
    callback: Nullable(
      Type.Object({
        url: Type.String(),
        status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
        attempts: Type.Integer({ minimum: 0 }),
      }),
    ),
    links: Type.Object({ self: Type.String() }),
  },
  { $id: 'Job' },
)

export const JobSummarySchema = Type.Object(
  {
    id: Type.String(),
    utility: Type.String(),
    mode: Type.Union([Type.Literal('sync'), Type.Literal('async')]),
    status: JobStatus,
    source: Type.String({ description: '"api" for jobs started with an API key, "playground" for console runs.' }),
    createdAt: Timestamp,
    finishedAt: Nullable(Timestamp),
    totalMs: Ms,
    upstreamMs: Ms,
    errorCode: Nullable(Type.String()),
    apiKeyName: Nullable(Type.String()),
    userEmail: Nullable(Type.String()),
    fileCount: Type.Integer({ minimum: 0 }),
  },
  { $id: 'JobSummary' },
)

export const JobListSchema = Type.Object(
  {
    items: Type.Array(Type.Ref('JobSummary')),
    nextCursor: Nullable(Type.String({ description: 'Pass as cursor for the next page; null at the end.' })),
  },
  { $id: 'JobList' },
)

/** An upload (POST /v1/files): a file of the key's own that its jobs name by `url`. */
export const UploadSchema = Type.Object(
  {
    id: Type.String({ pattern: '^file_[0-9A-HJKMNP-TV-Z]{26}$' }),
    object: Type.Literal('file'),
    name: Type.String({ description: 'The name it was uploaded with (the last segment of its url).' }),
    size: Type.Integer({ minimum: 0, description: 'Bytes stored.' }),
    contentType: Type.String({ description: 'Told by the content itself, not the name or the Content-Type sent.' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the bytes stored, hex.' }),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    url: Type.String({
      description: "The s3:// name a job's input takes (url, files[].url); readable by this key's jobs only.",
    }),
  },
  { $id: 'Upload' },
)

/** A direct upload announced (POST /v1/files?size=): where to send the file, then complete it. */
export const DirectUploadSchema = Type.Object(
  {
    id: Type.String({ pattern: '^file_[0-9A-HJKMNP-TV-Z]{26}$', description: 'The file id it will have.' }),
    object: Type.Literal('direct_upload'),
    name: Type.String(),
    size: Type.Integer({ minimum: 1, description: 'Bytes announced: storage must hold exactly these.' }),
    expiresAt: Type.String({
      format: 'date-time',
      description: 'Until when the part URLs work and the upload may be completed (an hour).',
    }),
    partSize: Type.Integer({ minimum: 1, description: 'Bytes of each part but the last.' }),
    parts: Type.Array(
      Type.Object({
        partNumber: Type.Integer({ minimum: 1 }),
        url: Type.String({
          description:
            "A presigned PUT of the part's bytes (from (partNumber − 1) × partSize); answers the part's ETag.",
        }),
      }),
    ),
    completeUrl: Type.String({ description: 'POST here once every part is sent.' }),
  },
  { $id: 'DirectUpload' },
)

export const UploadListSchema = Type.Object(
  {
    items: Type.Array(Type.Ref('Upload')),
    nextCursor: Nullable(Type.String({ description: 'Pass as cursor for the next page; null at the end.' })),
  },
  { $id: 'UploadList' },
)

export const ErrorSchema = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Branch on this, never on message.' }),
      message: Type.String(),
      details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
      requestId: Type.Optional(Type.String()),
    }),
  },
  { $id: 'Error' },
)

export const CatalogEntrySchema = Type.Object(
  {
    slug: Type.String(),
    name: Type.String(),
    description: Type.String(),
    category: Type.String(),
    icon: Type.String(),
    target: Type.String(),
    maxDurationSeconds: Type.Integer(),
    inputSchema: Type.Object({}, { additionalProperties: true, description: 'JSON Schema of the utility input.' }),
    exampleInput: Type.Object({}, { additionalProperties: true }),
    enabled: Type.Boolean(),
  },
  { $id: 'CatalogEntry' },
)

export const UtilityListSchema = Type.Object({ items: Type.Array(Type.Ref('CatalogEntry')) }, { $id: 'UtilityList' })

/** The body of a callback (a webhook): the event and the job exactly as GET /v1/jobs/{id} returns it. */
export const CallbackEventSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('job.succeeded'), Type.Literal('job.failed')]),
    timestamp: Type.String({ description: 'When the event was made (ISO-8601 with milliseconds).' }),
    data: Type.Ref('Job'),
  },
  { $id: 'CallbackEvent' },
)

export const RESPONSE_SCHEMAS = [
  FileReferenceSchema,
  JobSchema,
  JobSummarySchema,
  JobListSchema,
  UploadSchema,
  DirectUploadSchema,
  UploadListSchema,
  ErrorSchema,
  CatalogEntrySchema,
  UtilityListSchema,
  CallbackEventSchema,
]
