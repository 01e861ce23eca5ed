import { randomUUID } from 'node:crypto'
import type { Context, Next } from 'koa'
import { invalid } from './api-error.js'

export const MAX_REQUEST_ID_LENGTH = 64
const PRINTABLE = /^[\x21-\x7e]+$/

/** Echoes the caller's X-Request-Id (at most 64 printable characters) or makes one, on every response. */
export async function requestId(ctx: Context, next: Next) {
  const given = ctx.get('X-Request-Id')
  const ok = given !== '' && given.length <= MAX_REQUEST_ID_LENGTH && PRINTABLE.test(given)
  ctx.state.requestId = ok ? given : `req_${randomUUID().replaceAll('-', '')}`
  ctx.set('X-Request-Id', ctx.state.requestId)
  if (given !== '' && !ok) throw invalid('X-Request-Id must be 1 to 64 printable characters.', [{ path: 'X-Request-Id', message: 'must be 1 to 64 printable characters' }])
  await next()
}
