import { randomUUID } from 'node:crypto'
import type { Context, Next } from 'koa'
import { invalid } from './api-error.js'

import { MAX_REQUEST_ID_LENGTH } from '../contract/limits.js'
const PRINTABLE = /^[\x21-\x7e]+$/

/** Echoes the caller's X-Request-Id (at most 64 printable characters) or makes one, on every response. */
export async function requestId(ctx: Context, next: Next) {
  const given = ctx.headers['x-request-id']
  const ok = typeof given === 'string' && given.length <= MAX_REQUEST_ID_LENGTH && PRINTABLE.test(given)
  ctx.state.requestId = ok ? given : `req_${randomUUID().replaceAll('-', '')}`
  ctx.set('X-Request-Id', ctx.state.requestId)
  if (given !== undefined && !ok)
    throw invalid('X-Request-Id must be 1 to 64 printable characters.', [
      { path: 'X-Request-Id', message: 'must be 1 to 64 printable characters' },
    ])
  await next()
}
