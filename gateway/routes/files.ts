import Router from '@koa/router'
import type { Context } from 'koa'
import { createdAtOfId } from '../../contract/ids.js'
import type { Upload } from '../../platform/db/uploads-table.js'
import { invalid, notFound, type ErrorDetail } from '../api-error.js'
import type { AuthenticatedKey } from '../auth.js'
import { LIST_LIMITS } from '../job-list.js'
import { requestLogFields } from '../request-id.js'
import type { RouteDeps } from './context.js'

/** An upload as the API answers it: `url` is the s3:// name a job's input takes. */
export function fileView(u: Upload, bucket: string) {
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

  const ownUpload = async (ctx: Context): Promise<Upload> => {
    const key = ctx.state.key as AuthenticatedKey
    const id = ctx.params.id as string
    const upload = await uploads.find(key.id, id)
    if (!upload) throw notFound(`No file ${JSON.stringify(id.slice(0, 100))}.`)
    return upload
  }

  // The file is the request body itself, streamed to storage as it arrives.
  router.post('/v1/files', async (ctx) => {
    const key = ctx.state.key as AuthenticatedKey
    const name = parseFileName(ctx.query.name)
    const expirySeconds = parseExpiry(
      ctx.query.expiresInSeconds,
      uploads.settings.defaultExpirySeconds,
      uploads.settings.maxExpirySeconds,
    )
    const length = ctx.get('Content-Length')
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
