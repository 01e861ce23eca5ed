import type { Context } from 'koa'
import type { UtilityDefinition } from '../contract/utility.js'
import type { Upload } from '../platform/db/uploads-table.js'
import { invalid } from './api-error.js'
import { MAX_BODY_BYTES } from './json-body.js'
import { s3UrlOf } from './routes/files.js'
import { readForm } from './multipart-form.js'
import { uploadKey } from '../contract/storage-keys.js'
import { newFileBatch } from '../contract/ids.js'
import type { Uploads } from './uploads.js'

/** The most files one multipart run may carry (merge-pdf's most inputs). */
export const MAX_MULTIPART_FILES = 100
/** The JSON fields a multipart run may carry beside its files. */
const FIELDS = new Set(['input', 'metadata', 'callbackUrl'])
/** The field names document parts go by; a utility that takes `assets` (html-pdf) takes `assets` parts too. */
const DOCUMENT_FIELDS = new Set(['file', 'files'])

/**
 * A run request sent as `multipart/form-data` (docs/api.md, The file in the request): each file
 * part (named `file` or `files`, in order) is stored as an upload of the caller's key, and the
 * request body the JSON route takes is made from them and the `input` (JSON: the rest of the
 * input), `metadata` (JSON) and `callbackUrl` fields. The job then takes the one accept path
 * every job takes. A single-document utility takes one file as its `url` (edit-pdf also a `stamp`
 * part, its stamp's picture or PDF, and `attachments` parts, files to embed; html-pdf also `assets`
 * parts: the files its page refers to, by file name; and no document part when `input` has
 * `html`); merge-pdf takes its
 * files in order as `files`. A request refused here, or later, leaves its uploads to expire.
 */
export async function readMultipartRun(
  ctx: Context,
  uploads: Uploads,
  apiKeyId: string,
  utility: UtilityDefinition,
  /** Read and check only, storing nothing: a retry of an Idempotency-Key that already has its job. */
  checkOnly = false,
): Promise<{ body: Record<string, unknown>; stored: ReadonlyMap<string, string> }> {
  const fields: Record<string, string> = {}
  const stored: Array<Pick<Upload, 'storageKey' | 'name'> & { field: string }> = []
  // The uploads this request stored, by id: the caller's own and unexpired, known without a read.
  const storedKeys = new Map<string, string>()
  const shape = partShapeOf(utility)
  const fileFields = shape.fileFields
  // The request's files are one batch: one entry of its runner's storage grant for them all.
  const nextId = newFileBatch()
  await readForm(
    ctx,
    { files: MAX_MULTIPART_FILES, fields: FIELDS.size, fieldBytes: MAX_BODY_BYTES, noun: 'A multipart run' },
    {
      file: async (field, name, stream) => {
        if (!fileFields.has(field))
          throw invalid(
            `Unknown part ${JSON.stringify(field.slice(0, 64))}: files go in parts named ${[...fileFields].join(', ')}.`,
            [{ path: field.slice(0, 64), message: 'is not a known part' }],
          )
        if (checkOnly) {
          stored.push({ storageKey: (await drained(stream, name)).storageKey, name, field })
          return
        }
        const upload = await uploads.store({
          apiKeyId,
          name,
          expirySeconds: uploads.settings.defaultExpirySeconds,
          body: stream,
          nextId,
        })
        stored.push({ storageKey: upload.storageKey, name, field })
        storedKeys.set(upload.id, upload.storageKey)
      },
      field: (field, value) => {
        if (!FIELDS.has(field))
          throw invalid(
            `Unknown field ${JSON.stringify(field.slice(0, 64))}: a multipart run takes file parts and the fields input, metadata and callbackUrl.`,
            [{ path: field.slice(0, 64), message: 'is not a known field' }],
          )
        fields[field] = value
      },
    },
  )
  const json = (field: string): unknown => {
    if (fields[field] === undefined) return undefined
    try {
      return JSON.parse(fields[field])
    } catch {
      throw invalid(`The field ${field} is not valid JSON.`, [{ path: field, message: 'is not valid JSON' }])
    }
  }
  const rest = json('input') ?? {}
  if (!rest || typeof rest !== 'object' || Array.isArray(rest))
    throw invalid('The field input must be a JSON object (the input besides its files).', [
      { path: 'input', message: 'must be an object' },
    ])
  const url = (u: (typeof stored)[number]) => s3UrlOf(u.storageKey, uploads.bucket)
  const documents = stored.filter((u) => DOCUMENT_FIELDS.has(u.field))
  const urls = documents.map(url)
  // A page given as html in the input needs no document part; everything else does.
  const inline = shape.assets && 'html' in (rest as object)
  if (urls.length === 0 && !inline)
    throw invalid('A multipart run needs at least one file part (named file).', [
      { path: 'file', message: 'is missing' },
    ])
  let input: Record<string, unknown>
  if (shape.files) {
    // zip-files names each entry: a part's own file name.
    const named = shape.filesNamed
    input = { ...rest, files: documents.map((u) => (named ? { url: url(u), fileName: u.name } : { url: url(u) })) }
  } else if (urls.length > 1 || (inline && urls.length > 0))
    throw invalid(
      inline
        ? `${utility.slug} takes its page as html or as a file, not both.`
        : `${utility.slug} takes one file; this request has ${urls.length}.`,
      [{ path: 'file', message: 'must be one file' }],
    )
  else input = inline ? { ...rest } : { ...rest, url: urls[0] }
  // List parts go after the entries the input gives: assets by URL, files to embed under their
  // part's file name.
  const given = rest as Record<string, unknown>
  const after = (listed: unknown, parts: object[]) => [...(Array.isArray(listed) ? listed : []), ...parts]
  const assets = stored.filter((u) => u.field === 'assets')
  if (assets.length)
    input.assets = after(
      given.assets,
      assets.map((u) => ({ url: url(u) })),
    )
  const attached = stored.filter((u) => u.field === 'attachments')
  if (attached.length)
    input.attachments = after(
      given.attachments,
      attached.map((u) => ({ url: url(u), name: u.name })),
    )
  const stamps = stored.filter((u) => u.field === 'stamp').map(url)
  if (stamps.length > 1)
    throw invalid('A multipart run takes one stamp part.', [{ path: 'stamp', message: 'must be one file' }])
  if (stamps.length)
    input.stamp = { ...(given.stamp && typeof given.stamp === 'object' ? given.stamp : {}), image: stamps[0] }
  const body: Record<string, unknown> = { input }
  if (fields.metadata !== undefined) body.metadata = json('metadata')
  if (fields.callbackUrl !== undefined) body.callbackUrl = fields.callbackUrl
  return { body, stored: storedKeys }
}

/** A file part read to its end and stored nowhere: the name a stored one would have. */
async function drained(stream: AsyncIterable<Buffer>, name: string): Promise<Pick<Upload, 'storageKey'>> {
  let size = 0
  for await (const chunk of stream) size += chunk.length
  if (size === 0)
    throw invalid('The file is empty: send its bytes as the part.', [{ path: 'body', message: 'is empty' }])
  return { storageKey: uploadKey('00000000', Date.now(), `file_${'0'.repeat(26)}`, name) }
}

/** What a utility's multipart run takes, read off its input schema once per utility. */
interface PartShape {
  /** The names its file parts may go by. */
  fileFields: ReadonlySet<string>
  /** Takes `assets` (html-pdf: the files its page refers to) and so a page as `html`. */
  assets: boolean
  /** Takes its documents as a `files` list of `{ url }` (merge-pdf, zip-files) rather than one `url`. */
  files: boolean
  /** Its files carry a name of their own (zip-files' entries). */
  filesNamed: boolean
}

const partShapes = new WeakMap<UtilityDefinition, PartShape>()

function partShapeOf(utility: UtilityDefinition): PartShape {
  const known = partShapes.get(utility)
  if (known) return known
  const props =
    (
      utility.inputSchema as {
        properties?: Record<string, { properties?: object; items?: { properties?: object } } | undefined>
      }
    ).properties ?? {}
  // Lists of files beside the document, as parts of that name: html-pdf's assets, edit-pdf's attachments.
  const assets = 'assets' in props
  const attachments = 'attachments' in props
  // edit-pdf's stamp.image: a stamp's picture or PDF, as a part named stamp.
  const stamp = 'image' in (props.stamp?.properties ?? {})
  const shape: PartShape = {
    fileFields: new Set([
      ...DOCUMENT_FIELDS,
      ...(assets ? ['assets'] : []),
      ...(stamp ? ['stamp'] : []),
      ...(attachments ? ['attachments'] : []),
    ]),
    assets,
    files: 'files' in props && !('url' in props),
    filesNamed: 'fileName' in (props.files?.items?.properties ?? {}),
  }
  partShapes.set(utility, shape)
  return shape
}
