import type { Context, Next } from 'koa'
import { contextOf, failSpan, SpanKind, tracer } from '../platform/tracing.js'

const UNTRACED = new Set(['/healthz', '/readyz', '/metrics'])

/**
 * One server span per request (probes and metrics aside), continuing the caller's W3C
 * `traceparent` when it sent one, active for everything the request does: its logs carry the
 * trace, and a job it creates stores the trace context (docs/observability.md). A no-op span
 * when tracing is off.
 */
export function traceRequests(routeOf: (ctx: Context) => string) {
  return async (ctx: Context, next: Next) => {
    if (UNTRACED.has(ctx.path)) return next()
    const given = ctx.headers.traceparent
    const parent = contextOf(typeof given === 'string' ? given : undefined)
    return tracer().startActiveSpan(
      ctx.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path } },
      parent,
      async (span) => {
        try {
          await next()
        } finally {
          const route = routeOf(ctx)
          span.updateName(`${ctx.method} ${route}`)
          span.setAttributes({
            'http.route': route,
            'http.response.status_code': ctx.status,
            ...(typeof ctx.state.requestId === 'string' ? { 'dutil.request_id': ctx.state.requestId } : {}),
            ...(typeof ctx.state.jobId === 'string' ? { 'dutil.job.id': ctx.state.jobId } : {}),
            ...(ctx.state.key?.id ? { 'dutil.api_key.id': String(ctx.state.key.id) } : {}),
          })
          const code = (ctx.body as { error?: { code?: unknown } } | undefined)?.error?.code
          if (ctx.status >= 500) failSpan(span, typeof code === 'string' ? code : 'internal')
          else if (ctx.status >= 400 && typeof code === 'string') span.setAttribute('dutil.error.code', code)
          span.end()
        }
      },
    )
  }
}
