import type { Context, Next } from 'koa'
import {
  type Context as TraceContext,
  contextOf,
  failSpan,
  SpanKind,
  spanFields,
  trace,
  tracer,
  TRUSTED_PARENT_ATTRIBUTE,
} from '../platform/tracing.js'
import type { AllowedNetworks } from '../contract/address-policy.js'

const UNTRACED = new Set(['/healthz', '/readyz', '/metrics'])

/**
 * The trace ids of the requests in flight, by the gateway's own request id (`requestRef`, never
 * the caller's X-Request-Id, which two requests may share): the gateway's pino mixin adds them to
 * every line logged with a `requestRef`, so its lines join the request's trace without an async
 * context (docs/adr/0025: the gateway runs without one, which cost ~10 % of its throughput).
 */
export class RequestTraces {
  private readonly inFlight = new Map<string, { trace_id: string; span_id: string }>()

  /** pino's mixin: the trace of the request a line names (a new object: pino merges into it). */
  readonly logFields = (line: object): object => {
    const id = (line as { requestRef?: unknown }).requestRef
    const fields = typeof id === 'string' ? this.inFlight.get(id) : undefined
    return fields ? { trace_id: fields.trace_id, span_id: fields.span_id } : {}
  }

  /** Middleware after the request id is set: the request's trace joins its lines from there on. */
  readonly track = async (ctx: Context, next: Next): Promise<void> => {
    const fields = spanFields(ctx.state.traceContext as TraceContext | undefined)
    if (fields.trace_id && typeof ctx.state.requestRef === 'string')
      this.inFlight.set(ctx.state.requestRef, fields as { trace_id: string; span_id: string })
    await next()
  }

  /** Called once the request's last line is written (its access log line included). */
  end(requestRef: unknown): void {
    if (typeof requestRef === 'string') this.inFlight.delete(requestRef)
  }
}

/**
 * One server span per request (probes and metrics aside), continuing the caller's W3C
 * `traceparent` when it sent one. Its context is `ctx.state.traceContext`: a job the request
 * creates stores it (docs/observability.md). A no-op span when tracing is off. The outermost
 * middleware but one: its span ends after the access log line is written.
 */
export function traceRequests(
  routeOf: (ctx: Context) => string,
  traces?: RequestTraces,
  trustedParents?: AllowedNetworks,
) {
  return async (ctx: Context, next: Next) => {
    if (UNTRACED.has(ctx.path)) return next()
    const given = ctx.headers.traceparent
    const parent = contextOf(typeof given === 'string' ? given : undefined)
    // A caller's sampled trace meets the sample ratio unless it comes from a trusted peer.
    const trusted = Boolean(given && trustedParents?.contains(ctx.req.socket.remoteAddress ?? ''))
    // No `url.path`: a path may hold a token (an invite link's); the span names its route pattern.
    const span = tracer().startSpan(
      ctx.method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': ctx.method, ...(trusted ? { [TRUSTED_PARENT_ATTRIBUTE]: true } : {}) },
      },
      parent,
    )
    ctx.state.traceContext = trace.setSpan(parent, span)
    try {
      await next()
    } finally {
      const requestId = typeof ctx.state.requestId === 'string' ? ctx.state.requestId : undefined
      const route = routeOf(ctx)
      span.updateName(`${ctx.method} ${route}`)
      span.setAttributes({
        'http.route': route,
        'http.response.status_code': ctx.status,
        ...(requestId ? { 'dutil.request_id': requestId } : {}),
        ...(typeof ctx.state.jobId === 'string' ? { 'dutil.job.id': ctx.state.jobId } : {}),
        ...(ctx.state.key?.id ? { 'dutil.api_key.id': String(ctx.state.key.id) } : {}),
      })
      const code = (ctx.body as { error?: { code?: unknown } } | undefined)?.error?.code
      if (ctx.status >= 500) failSpan(span, typeof code === 'string' ? code : 'internal')
      else if (ctx.status >= 400 && typeof code === 'string') span.setAttribute('dutil.error.code', code)
      span.end()
      traces?.end(ctx.state.requestRef)
    }
  }
}
