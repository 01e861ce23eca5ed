import { requestLogFields } from './request-id.js'
import type { Context, Next } from 'koa'
import type { Logger } from 'pino'
import { DatabaseUnavailableError } from '../platform/db/database.js'
import { ApiError } from './api-error.js'
import type { ErrorCode } from '../contract/error-codes.js'

/** Seconds a client is asked to wait when the job record cannot be reached. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

export function errorEnvelope(code: string, message: string, extra: Record<string, unknown> = {}) {
  return { error: { code, message, ...extra } }
}

/** Maps every error to the error envelope (docs/api.md); unexpected ones are logged with the request id. */
/**
 * `routeOf` names the route pattern a request matched: logged instead of its path, which may
 * hold a token (an invite link's).
 */
export function errorMiddleware(
  log: Logger,
  routeOf: (ctx: Context) => string = () => 'unmatched',
  /** Requests answered in plain text, as Gotenberg answers (its routes: gateway/gotenberg/). */
  inPlainText: (ctx: Context) => boolean = () => false,
) {
  return async (ctx: Context, next: Next) => {
    try {
      await next()
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError('not_found', `No route ${ctx.method} ${ctx.path}.`)
      }
    } catch (err) {
      const { requestId, requestRef } = requestLogFields(ctx)
      if (err instanceof ApiError) {
        for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v)
        answer(ctx, err, requestId, inPlainText)
        if (err.status >= 500)
          log.warn(
            {
              requestId,
              requestRef,
              ...(ctx.state.jobId ? { jobId: ctx.state.jobId } : {}),
              code: err.code,
              message: err.message,
              cause: (err.cause as Error | undefined)?.message,
            },
            'request failed',
          )
        return
      }
      const where = {
        requestId,
        requestRef,
        ...(ctx.state.jobId ? { jobId: ctx.state.jobId } : {}),
        method: ctx.method,
        route: routeOf(ctx),
      }
      if (err instanceof DatabaseUnavailableError) {
        // Nothing was accepted (a job exists only once its row is committed): safe to retry.
        log.warn({ ...where, err: (err.cause as Error)?.message }, 'job record unavailable')
        ctx.set('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS))
        answer(
          ctx,
          new ApiError('internal', 'The job record is unavailable right now; retry shortly.'),
          requestId,
          inPlainText,
        )
        return
      }
      if (ctx.req.destroyed && !ctx.req.complete) {
        // The client hung up before its request's body arrived: nothing was accepted, nobody reads
        // an answer; the request is logged as the client's, never as a server error.
        log.info({ ...where, err: (err as Error).message }, 'client left before its request arrived')
        answer(
          ctx,
          new ApiError('invalid_request', 'The request ended before its whole body arrived.'),
          requestId,
          inPlainText,
        )
        return
      }
      log.error({ err, ...where }, 'unexpected error')
      answer(ctx, new ApiError('internal', 'An unexpected error occurred.'), requestId, inPlainText)
    }
  }
}

/** The error as the request's caller reads one: the envelope, or Gotenberg's plain text. */
function answer(ctx: Context, err: ApiError, requestId: string, inPlainText: (ctx: Context) => boolean): void {
  ctx.status = err.status
  if (inPlainText(ctx)) return answerPlainText(ctx, err, requestId)
  // Every 500 carries the request id that the logs hold, as docs/api.md has it.
  ctx.body = errorEnvelope(err.code, err.message, {
    ...(err.details ? { details: err.details } : {}),
    ...(err.status >= 500 ? { requestId } : {}),
  })
}

/**
 * Gotenberg's statuses where they differ from the API's: a document the utility refuses is a bad
 * request (400), a run past its time is 503.
 */
const PLAIN_TEXT_STATUS: Partial<Record<ErrorCode, number>> = { upstream_rejected: 400, upstream_timeout: 503 }

/** The error as Gotenberg's clients read one: its status and a plain-text message, the code first. */
function answerPlainText(ctx: Context, err: ApiError, requestId: string): void {
  ctx.status = PLAIN_TEXT_STATUS[err.code] ?? err.status
  const lines = [`${err.code}: ${err.message}`]
  for (const d of err.details ?? []) if (!err.message.includes(d.message)) lines.push(`${d.path}: ${d.message}`)
  if (ctx.status >= 500) lines.push(`request id: ${requestId}`)
  ctx.type = 'text/plain; charset=utf-8'
  ctx.body = `${lines.join('\n')}\n`
}
