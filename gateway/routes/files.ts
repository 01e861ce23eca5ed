import Router from '@koa/router'
import type { Context } from 'koa'
import { createdAtOfId } from '../../contract/ids.js'
import type { ReadyUpload } from '../../platform/db/uploads-table.js'
import { parsePartTags } from '../direct-uploads.js'
import { readJsonBody } from '../json-body.js'
import { invalid, notFound, type ErrorDetail } from '../api-error.js'
import type { AuthenticatedKey } from '../auth.js'
import { LIST_LIMITS } from '../job-list.js'
import { requestLogFields } from '../request-id.js'
import type { RouteDeps } from './context.js'

/** An upload as the API answers it: `url` is the s3:// name a job's input takes. */
export function fileView(u: ReadyUpload, bucket: string) {
  return {
    id: u.id,
    object: 'file' as const,
    name: u.name,
    size: u.size,
    contentType: u.contentType,
    sha256: u.sha256,
    createdAt: u.createdAt,
    expiresAt: u.expiresAt,
    url: s3UrlOf(u.storageKey, bucket),
  }
}

/** The s3:// name of a stored object, each segment percent-encoded (as parseS3Url decodes it). */
export const s3UrlOf = (key: string, bucket: string) =>
  `s3://${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`

/** A file name as stored: one path segment, no control characters, at most 255 bytes of UTF-8. */
export function parseFileName(raw: unknown): string {
  const problem = (message: string) => invalid(`The file name ${message}.`, [{ path: 'name', message }])
  if (raw === undefined) return 'file'
  if (typeof raw !== 'string') throw problem('must be given once')
  if (raw.length < 1 || Buffer.byteLength(raw) > 255) throw problem('must be 1 to 255 bytes long (UTF-8)')
  if (!(raw as string & { isWellFormed(): boolean }).isWellFormed()) throw problem('must be valid Unicode')
  if (/[/\\\u0000-\u001f\u007f]/.test(raw) || raw === '.' || raw === '..')
    throw problem('must be one name, without slashes, backslashes or control characters')
  return raw
}

/** A completion's body: up to 10,000 part ETags. */
const COMPLETE_BODY_BYTES = 1024 * 1024

function parseSize(raw: unknown): number {
  if (typeof raw !== 'string' || !/^\d{1,13}$/.test(raw) || Number(raw) < 1)
    throw invalid("size must be the file's size in bytes, a positive integer.", [
      { path: 'size', message: 'must be a positive integer' },
    ])
  return Number(raw)
}

function parseExpiry(raw: unknown, defaultSeconds: number, maxSeconds: number): number {
  if (raw === undefined) return defaultSeconds
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw) || Number(raw) < 60 || Number(raw) > maxSeconds)
    throw invalid(`expiresInSeconds must be an integer from 60 to ${maxSeconds}.`, [
      { path: 'expiresInSeconds', message: `must be an integer from 60 to ${maxSeconds}` },
    ])
  return Number(raw)
}

/** The opaque cursor of the upload list: the last id of a page (a ULID: its creation time too). */
const encodeCursor = (lastId: string) => Buffer.from(JSON.stringify({ v: 1, f: lastId })).toString('base64url')

function decodeCursor(raw: unknown): { createdAt: string; id: string } | undefined {
  if (raw === undefined) return undefined
  const bad = () =>
    invalid('The cursor is not valid; pass nextCursor exactly as it was returned.', [
      { path: 'cursor', message: 'is not a valid cursor' },
    ])
  if (typeof raw !== 'string' || raw.length > 200) throw bad()
  let id: unknown
  try {
    id = (JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { f?: unknown }).f
  } catch {
    throw bad()
  }
  const createdAt = typeof id === 'string' ? createdAtOfId(id, 'file') : null
  if (!createdAt) throw bad()
  return { createdAt, id: id as string }
}

function parseLimit(raw: unknown): number {
  if (raw === undefined) return LIST_LIMITS.default
  const details: ErrorDetail[] = [{ path: 'limit', message: 'must be an integer from 1 to 100' }]
  if (typeof raw !== 'string' || !/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > LIST_LIMITS.max)
    throw invalid('The list query is not valid.', details)
  return Number(raw)
}

export function fileRoutes(deps: RouteDeps): Router {
  const router = new Router()
  const { uploads } = deps

  const ownUpload = async (ctx: Context): Promise<ReadyUpload> => {
    const key = ctx.state.key as AuthenticatedKey
    const id = ctx.params.id as string
    const upload = await uploads.find(key.id, id)
    if (!upload) throw notFound(`No file ${JSON.stringify(id.slice(0, 100))}.`)
    return upload
  }

  // The file is the request body itself, streamed to storage as it arrives; or, announced by its
  // size with no body, a direct upload: presigned requests that take it straight to storage.
  router.post('/v1/files', async (ctx) => {
    const key = ctx.state.key as AuthenticatedKey
    const name = parseFileName(ctx.query.name)
    const expirySeconds = parseExpiry(
      ctx.query.expiresInSeconds,
      uploads.settings.defaultExpirySeconds,
      uploads.settings.maxExpirySeconds,
    )
    const length = ctx.get('Content-Length')
    if (ctx.query.size !== undefined) {
      if ((length && length !== '0') || ctx.get('Transfer-Encoding'))
        throw invalid('A direct upload is announced without a body: send the file to the URLs the answer gives.', [
          { path: 'body', message: 'must be empty with size' },
        ])
      const offer = await deps.directUploads.announce({
        apiKeyId: key.id,
        name,
        size: parseSize(ctx.query.size),
        expirySeconds,
      })
      deps.log.info(
        { ...requestLogFields(ctx), fileId: offer.upload.id, size: offer.upload.size, apiKeyId: key.id },
        'direct upload announced',
      )
      ctx.status = 201
      ctx.body = {
        id: offer.upload.id,
        object: 'direct_upload',
        name: offer.upload.name,
        size: offer.upload.size,
        expiresAt: offer.upload.expiresAt,
        partSize: offer.partSize,
        parts: offer.parts,
        completeUrl: `/v1/files/${offer.upload.id}/complete`,
      }
      return
    }
    const upload = await uploads.store({
      apiKeyId: key.id,
      name,
      expirySeconds,
      declaredBytes: length ? Number(length) : undefined,
      body: ctx.req,
    })
    deps.log.info({ ...requestLogFields(ctx), fileId: upload.id, size: upload.size, apiKeyId: key.id }, 'file uploaded')
    ctx.status = 201
    ctx.set('Location', `/v1/files/${upload.id}`)
    ctx.body = fileView(upload, deps.bucket)
  })

  router.post('/v1/files/:id/complete', async (ctx) => {
    const key = ctx.state.key as AuthenticatedKey
    const parts = parsePartTags(await readJsonBody(ctx, COMPLETE_BODY_BYTES))
    const upload = await deps.directUploads.complete(key.id, ctx.params.id as string, parts)
    deps.log.info({ ...requestLogFields(ctx), fileId: upload.id, size: upload.size, apiKeyId: key.id }, 'file uploaded')
    ctx.body = fileView(upload, deps.bucket)
  })

  router.get('/v1/files', async (ctx) => {
    const key = ctx.state.key as AuthenticatedKey
    const limit = parseLimit(ctx.query.limit)
    const rows = await uploads.list(key.id, limit + 1, decodeCursor(ctx.query.cursor))
    const page = rows.slice(0, limit)
    ctx.body = {
      items: page.map((u) => fileView(u, deps.bucket)),
      nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1].id) : null,
    }
  })

  router.get('/v1/files/:id', async (ctx) => {
    ctx.body = fileView(await ownUpload(ctx), deps.bucket)
  })

  router.delete('/v1/files/:id', async (ctx) => {
    const upload = await ownUpload(ctx)
    await uploads.delete(upload)
    deps.log.info({ ...requestLogFields(ctx), fileId: upload.id }, 'file deleted')
    ctx.status = 204
  })

  return router
}
