import { requestLogFields } from './request-id.js'
import type { Context, Next } from 'koa'
import type { Logger } from 'pino'
import { DatabaseUnavailableError } from '../platform/db/database.js'
import { ApiError } from './api-error.js'

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
export function errorMiddleware(log: Logger, routeOf: (ctx: Context) => string = () => 'unmatched') {
  return async (ctx: Context, next: Next) => {
    try {
      await next()
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError('not_found', `No route ${ctx.method} ${ctx.path}.`)
      }
    } catch (err) {
      const { requestId, requestRef } = requestLogFields(ctx)
      if (err instanceof ApiError) {
        ctx.status = err.status
        for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v)
        // Every 500 carries the request id that the logs hold, as docs/api.md has it.
        ctx.body = errorEnvelope(err.code, err.message, {
          ...(err.details ? { details: err.details } : {}),
          ...(err.status >= 500 ? { requestId } : {}),
        })
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
        ctx.status = 500
        ctx.set('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS))
        ctx.body = errorEnvelope('internal', 'The job record is unavailable right now; retry shortly.', { requestId })
        return
      }
      log.error({ err, ...where }, 'unexpected error')
      ctx.status = 500
      ctx.body = errorEnvelope('internal', 'An unexpected error occurred.', { requestId })
    }
  }
}
