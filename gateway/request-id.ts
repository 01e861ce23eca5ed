import { randomUUID } from 'node:crypto'
import type { Context, Next } from 'koa'
import { invalid } from './api-error.js'

import { MAX_REQUEST_ID_LENGTH } from '../contract/limits.js'
const PRINTABLE = /^[\x21-\x7e]+$/

/** What a log line about a request carries: the id the caller sees and the gateway's own. */
export interface RequestLogFields {
  requestId: string
  /** The gateway's own id of the request: unique even when callers reuse an X-Request-Id. */
  requestRef: string
}

let serial = 0
const PROCESS_TAG = randomUUID().slice(0, 8)

/** The fields of a log line about this request. */
export function requestLogFields(ctx: Context): RequestLogFields {
  return { requestId: ctx.state.requestId as string, requestRef: ctx.state.requestRef as string }
}

/**
 * Echoes the caller's X-Request-Id (at most 64 printable characters) or makes one, on every
 * response; and gives the request an id of the gateway's own (`requestRef`, never the caller's).
 */
export async function requestId(ctx: Context, next: Next) {
  ctx.state.requestRef = `${PROCESS_TAG}-${(++serial).toString(36)}`
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
