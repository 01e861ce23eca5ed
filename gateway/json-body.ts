import type { Context } from 'koa'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../platform/bounded-json.js'
import { readAtMost } from '../platform/read-at-most.js'
import { invalid } from './api-error.js'

/** Largest request body: 500 zip-files entries with 4 KB URLs plus names and metadata. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024

/** Largest body before authentication (console sign-in, invites): a few fields. */
export const UNAUTHENTICATED_BODY_BYTES = 16 * 1024

const sizeText = (bytes: number) => (bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MB` : `${bytes / 1024} KB`)

/**
 * Reads a JSON body of at most `maxBytes` (a declared Content-Length over it is refused before
 * reading). An empty body is `{}`; malformed JSON and other media types are 400s.
 */
export async function readJsonBody(ctx: Context, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  const tooLarge = () => invalid(`The request body is larger than ${sizeText(maxBytes)}.`)
  const declared = Number(ctx.get('Content-Length') || 0)
  if (declared > maxBytes) throw tooLarge()
  const text = (await readAtMost(ctx.req, maxBytes, tooLarge)).toString('utf8')
  if (text.trim() === '') return {}
  const type = ctx.get('Content-Type')
  if (type && !/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    throw invalid('Send the body as JSON with Content-Type: application/json.', [
      { path: 'Content-Type', message: 'must be application/json' },
    ])
  }
  // Depth first, by a linear scan: nothing recursive (validation, copies) meets a deeper body.
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw invalid(`The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`, [
      { path: '(root)', message: `nests deeper than ${MAX_JSON_DEPTH} levels` },
    ])
  }
  try {
    return JSON.parse(text)
  } catch {
    throw invalid('The request body is not valid JSON.', [{ path: '(root)', message: 'is not valid JSON' }])
  }
}
