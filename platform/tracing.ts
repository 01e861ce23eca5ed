import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api'

/**
 * Tracing (docs/observability.md, docs/adr/0025-tracing.md): OpenTelemetry's API everywhere,
 * its SDK loaded only when a program is given a collector. Without one every span is the API's
 * no-op and no context is stored or sent, so tracing off costs a function call per span.
 */
export interface TracingConfig {
  /** OTLP/HTTP base address of the collector; spans go to `<endpoint>/v1/traces`. */
  endpoint: string
  /** Share of new traces kept (0–1); a continued trace keeps its caller's decision. */
  sampleRatio: number
  /** The program's `service.name`, e.g. dutil-gateway. */
  serviceName: string
}

/**
 * A server span's attribute that says its remote parent comes from a trusted peer (the gateway's
 * DUTIL_TRACING_TRUSTED_PARENTS): such a caller's sampling decision is kept.
 */
export const TRUSTED_PARENT_ATTRIBUTE = 'dutil.trace.trusted_parent'

/**
 * Starts the SDK when tracing is on; the function it returns sends what is buffered and stops.
 * `asyncContext: false` registers no async context (AsyncLocalStorage, which on Node 20 tracks
 * every promise): spans then take their parent explicitly and `context.active()` is the root.
 */
export async function startTracing(
  cfg: TracingConfig | undefined,
  opts: { asyncContext?: boolean; trustRemoteParents?: boolean } = {},
): Promise<() => Promise<void>> {
  if (!cfg) return async () => {}
  const { startTracingSdk } = await import('./tracing-sdk.js')
  return startTracingSdk(cfg, opts.asyncContext ?? true, opts.trustRemoteParents ?? true)
}

/** dutil's tracer (the API's no-op until the SDK is started). */
export function tracer(): Tracer {
  return trace.getTracer('dutil')
}

/** The W3C trace context headers of a context (the active one by default), to send on. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {}
  propagation.inject(ctx, carrier)
  return carrier
}

/** The W3C `traceparent` of a context (the active one by default); undefined when tracing is off. */
export function traceparentOf(ctx: Context = context.active()): string | undefined {
  return traceHeaders(ctx).traceparent
}

/**
 * The context a stored or received `traceparent` continues (the root context when there is none
 * or it is malformed: the propagator checks its fixed 55-character form).
 */
export function contextOf(traceparent: string | undefined): Context {
  if (!traceparent || traceparent.length > 64) return ROOT_CONTEXT
  return propagation.extract(ROOT_CONTEXT, { traceparent })
}

export interface SpanOptions {
  parent?: Context
  attributes?: Attributes
  kind?: SpanKind
  /** When the span began, if before now (a wait measured after the fact). */
  startTime?: number
}

/**
 * Runs `fn` in a span that ends with it, active for everything `fn` calls (its logs carry the
 * trace). A thrown error marks the span as failed, with the error's code (or name) only:
 * messages may quote what a user sent.
 */
export async function inSpan<T>(name: string, opts: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const parent = opts.parent ?? context.active()
  return tracer().startActiveSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, startTime: opts.startTime },
    parent,
    async (span) => {
      try {
        return await fn(span)
      } catch (err) {
        failSpan(span, errorCodeOf(err))
        throw err
      } finally {
        span.end()
      }
    },
  )
}

function errorCodeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code === 'string' && code.length <= 64) return code
  return err instanceof Error ? err.name : 'error'
}

/** A span that covers a time already over (a wait), ended at once. */
export function pastSpan(name: string, opts: SpanOptions & { startTime: number; endTime?: number }): void {
  const span = tracer().startSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, startTime: opts.startTime },
    opts.parent ?? context.active(),
  )
  span.end(opts.endTime)
}

/** What every span about a job says of it: its id, utility and API key id (never the key). */
export function jobAttributes(spec: { jobId: string; utility: string; apiKeyId: string }): Attributes {
  return {
    'dutil.job.id': spec.jobId,
    'dutil.utility': spec.utility,
    ...(spec.apiKeyId ? { 'dutil.api_key.id': spec.apiKeyId } : {}),
  }
}

/** Marks a span failed with an error code (dutil's, never a message). */
export function failSpan(span: Span, code: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: code })
  span.setAttribute('dutil.error.code', code)
}

/** pino's mixin: the active span's ids on every log line written inside it. */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  return spanFields(context.active())
}

/** The ids of a context's span, for a log line or an exemplar (none when it was not sampled). */
export function spanFields(ctx: Context | undefined): { trace_id?: string; span_id?: string } {
  const span = ctx && trace.getSpan(ctx)
  if (!span) return {}
  const { traceId, spanId, traceFlags } = span.spanContext()
  // A span the sampler dropped is not in any backend: its ids would point nowhere.
  if (!(traceFlags & 1)) return {}
  return { trace_id: traceId, span_id: spanId }
}

export { context, SpanKind, SpanStatusCode, trace, type Context, type Span }
