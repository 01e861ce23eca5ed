import type { Readable } from 'node:stream'
import busboy from 'busboy'
import type { Context } from 'koa'
import type { UtilityDefinition } from '../contract/utility.js'
import type { Upload } from '../platform/db/uploads-table.js'
import { ApiError, invalid } from './api-error.js'
import { MAX_BODY_BYTES } from './json-body.js'
import { parseFileName, s3UrlOf } from './routes/files.js'
import { uploadKey } from '../contract/storage-keys.js'
import { newFileBatch } from '../contract/ids.js'
import type { Uploads } from './uploads.js'

/** The most files one multipart run may carry (merge-pdf's most inputs). */
export const MAX_MULTIPART_FILES = 100
/** The JSON fields a multipart run may carry beside its files. */
const FIELDS = new Set(['input', 'metadata', 'callbackUrl'])
/** The field names document parts go by; a utility that takes `assets` (html-pdf) takes `assets` parts too. */
const DOCUMENT_FIELDS = new Set(['file', 'files'])

export const isMultipart = (ctx: Context) => /^multipart\/form-data\b/i.test(ctx.get('Content-Type'))

/**
 * A run request sent as `multipart/form-data` (docs/api.md, The file in the request): each file
 * part (named `file` or `files`, in order) is stored as an upload of the caller's key, and the
 * request body the JSON route takes is made from them and the `input` (JSON: the rest of the
 * input), `metadata` (JSON) and `callbackUrl` fields. The job then takes the one accept path
 * every job takes. A single-document utility takes one file as its `url` (html-pdf also `assets`
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
): Promise<{ body: Record<string, unknown> }> {
  const fields: Record<string, string> = {}
  const stored: Array<Pick<Upload, 'storageKey' | 'name'> & { field: string }> = []
  const fileFields = takesAssets(utility) ? new Set([...DOCUMENT_FIELDS, 'assets']) : DOCUMENT_FIELDS
  // The request's files are one batch: one entry of its runner's storage grant for them all.
  const nextId = newFileBatch()
  let parser: busboy.Busboy
  try {
    parser = busboy({
      headers: ctx.req.headers,
      limits: {
        files: MAX_MULTIPART_FILES,
        fields: FIELDS.size,
        fieldSize: MAX_BODY_BYTES,
        parts: MAX_MULTIPART_FILES + FIELDS.size,
      },
    })
  } catch {
    throw invalid('The multipart body has no boundary in its Content-Type.', [
      { path: 'Content-Type', message: 'must be multipart/form-data with a boundary' },
    ])
  }
  await new Promise<void>((resolve, reject) => {
    let failed = false
    const fail = (err: unknown) => {
      if (failed) return
      failed = true
      ctx.req.unpipe(parser)
      ctx.req.resume() // drain what is left, so the answer can be sent
      reject(err)
    }
    // Files are stored one after another as they arrive; the parser waits for each.
    let chain = Promise.resolve()
    // Nothing a handler throws may escape into the parser's event loop (it would end the process).
    const guarded =
      <A extends unknown[]>(handle: (...args: A) => void) =>
      (...args: A) => {
        try {
          handle(...args)
        } catch (err) {
          fail(err)
        }
      }
    parser.on(
      'file',
      guarded((rawField: string | undefined, stream: Readable, info: busboy.FileInfo) => {
        const field = rawField ?? ''
        // A form that ends mid-file errs this stream, perhaps before it is read: the parser's own
        // error answers the request; without a listener here it would end the process.
        stream.on('error', () => {})
        if (!fileFields.has(field)) {
          stream.resume()
          return fail(
            invalid(
              `Unknown part ${JSON.stringify(field.slice(0, 64))}: files go in parts named ${[...fileFields].join(', ')}.`,
              [{ path: field.slice(0, 64), message: 'is not a known part' }],
            ),
          )
        }
        chain = chain.then(async () => {
          if (failed) return void stream.resume()
          const name = fileNameOf(info.filename)
          try {
            const upload = checkOnly
              ? await drained(stream, name)
              : await uploads.store({
                  apiKeyId,
                  name,
                  expirySeconds: uploads.settings.defaultExpirySeconds,
                  body: stream,
                  nextId,
                })
            stored.push({ storageKey: upload.storageKey, name, field })
          } catch (err) {
            stream.resume()
            fail(
              err instanceof ApiError && err.details
                ? new ApiError(err.code, `${name}: ${err.message}`, err.details, err.headers)
                : err,
            )
          }
        })
      }),
    )
    parser.on(
      'field',
      guarded((rawField: string | undefined, value: string, info: busboy.FieldInfo) => {
        // A part without a name has none (busboy gives undefined).
        const field = rawField ?? ''
        if (!FIELDS.has(field))
          return fail(
            invalid(
              `Unknown field ${JSON.stringify(field.slice(0, 64))}: a multipart run takes file parts and the fields input, metadata and callbackUrl.`,
              [{ path: field.slice(0, 64), message: 'is not a known field' }],
            ),
          )
        if (info.valueTruncated)
          return fail(invalid(`The field ${field} is larger than 4 MB.`, [{ path: field, message: 'is too large' }]))
        fields[field] = value
      }),
    )
    parser.on('filesLimit', () =>
      fail(
        invalid(`A multipart run takes at most ${MAX_MULTIPART_FILES} files.`, [
          { path: 'files', message: `more than ${MAX_MULTIPART_FILES}` },
        ]),
      ),
    )
    parser.on('partsLimit', () =>
      fail(invalid('The multipart body has too many parts.', [{ path: '(root)', message: 'too many parts' }])),
    )
    parser.on('fieldsLimit', () =>
      fail(invalid('The multipart body has too many fields.', [{ path: '(root)', message: 'too many fields' }])),
    )
    parser.on('error', () =>
      fail(
        invalid('The multipart body could not be read.', [
          { path: '(root)', message: 'is not valid multipart/form-data' },
        ]),
      ),
    )
    parser.on('close', () => void chain.then(() => (failed ? undefined : resolve())))
    ctx.req.on('error', fail)
    ctx.req.pipe(parser)
  })
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
  const assets = stored.filter((u) => u.field === 'assets').map(url)
  // A page given as html in the input needs no document part; everything else does.
  const inline = takesAssets(utility) && 'html' in (rest as object)
  if (urls.length === 0 && !inline)
    throw invalid('A multipart run needs at least one file part (named file).', [
      { path: 'file', message: 'is missing' },
    ])
  let input: Record<string, unknown>
  if (takesFiles(utility)) {
    // zip-files names each entry: a part's own file name.
    const named = filesTakeNames(utility)
    input = { ...rest, files: documents.map((u) => (named ? { url: url(u), fileName: u.name } : { url: url(u) })) }
  } else if (urls.length > 1 || (inline && urls.length > 0))
    throw invalid(
      inline
        ? `${utility.slug} takes its page as html or as a file, not both.`
        : `${utility.slug} takes one file; this request has ${urls.length}.`,
      [{ path: 'file', message: 'must be one file' }],
    )
  else input = inline ? { ...rest } : { ...rest, url: urls[0] }
  if (assets.length) {
    const given = (rest as { assets?: unknown }).assets
    input.assets = [...(Array.isArray(given) ? given : []), ...assets.map((url) => ({ url }))]
  }
  const body: Record<string, unknown> = { input }
  if (fields.metadata !== undefined) body.metadata = json('metadata')
  if (fields.callbackUrl !== undefined) body.callbackUrl = fields.callbackUrl
  return { body }
}

/** A file part read to its end and stored nowhere: the name a stored one would have. */
async function drained(stream: AsyncIterable<Buffer>, name: string): Promise<Pick<Upload, 'storageKey'>> {
  let size = 0
  for await (const chunk of stream) size += chunk.length
  if (size === 0)
    throw invalid('The file is empty: send its bytes as the part.', [{ path: 'body', message: 'is empty' }])
  return { storageKey: uploadKey(Date.now(), `file_${'0'.repeat(26)}`, name) }
}

/** Whether a utility's files carry a name of their own (zip-files' entries). */
function filesTakeNames(utility: UtilityDefinition): boolean {
  const files = (utility.inputSchema as { properties?: Record<string, { items?: { properties?: object } }> }).properties
    ?.files
  return 'fileName' in (files?.items?.properties ?? {})
}

/** Whether a utility takes files its page refers to (html-pdf's `assets`). */
function takesAssets(utility: UtilityDefinition): boolean {
  return 'assets' in ((utility.inputSchema as { properties?: Record<string, unknown> }).properties ?? {})
}

/** Whether a utility takes its documents as a `files` list of `{ url }` (merge-pdf) rather than one `url`. */
function takesFiles(utility: UtilityDefinition): boolean {
  const props = (utility.inputSchema as { properties?: Record<string, unknown> }).properties ?? {}
  return 'files' in props && !('url' in props)
}

/** A part's file name as an upload's: its last path segment (browsers may send a path), else `file`. */
function fileNameOf(raw: string | undefined): string {
  const last =
    (raw ?? '')
      .split(/[/\\]/)
      .pop()
      ?.replace(/[\u0000-\u001f\u007f]/g, '') ?? ''
  if (!last || last === '.' || last === '..') return 'file'
  try {
    return parseFileName(last)
  } catch {
    return 'file'
  }
}
