import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import type { Attributes, Context, Link, SpanKind } from '@opentelemetry/api'
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SamplingResult,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { TRUSTED_PARENT_ATTRIBUTE, type TracingConfig } from './tracing.js'

/**
 * The decision for a span whose remote parent was sampled: a caller cannot force sampling with
 * `traceparent …-01`, so the ratio applies to its trace too (by trace id, so every program
 * decides alike), unless the span says its parent is trusted (a peer in the gateway's
 * DUTIL_TRACING_TRUSTED_PARENTS) or the program trusts every remote parent (the operator and the
 * runners, whose parents are dutil's own).
 */
export class CallerSampler implements Sampler {
  private readonly ratio: TraceIdRatioBasedSampler
  private readonly keep: ParentBasedSampler

  constructor(
    sampleRatio: number,
    private readonly trustAll: boolean,
  ) {
    this.ratio = new TraceIdRatioBasedSampler(sampleRatio)
    this.keep = new ParentBasedSampler({ root: this.ratio })
  }

  shouldSample(
    context: Context,
    traceId: string,
    spanName: string,
    spanKind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    const keep = this.trustAll || attributes[TRUSTED_PARENT_ATTRIBUTE] === true
    return (keep ? this.keep : this.ratio).shouldSample(context, traceId, spanName, spanKind, attributes, links)
  }

  toString(): string {
    return `CallerSampler{ratio=${this.ratio.toString()}, trustAll=${this.trustAll}}`
  }
}

/**
 * The OpenTelemetry SDK, loaded by startTracing only when tracing is on: spans batched to an
 * OTLP/HTTP collector (protobuf: smaller and cheaper to encode than JSON), new traces sampled at
 * the configured ratio, continued ones as their caller decided only where the caller is trusted
 * (CallerSampler), W3C trace context as the
 * propagator, and async context through AsyncLocalStorage unless the program asks for none
 * (`asyncContext` false: the gateway passes each request's context by hand).
 */
export function startTracingSdk(
  cfg: TracingConfig,
  asyncContext: boolean,
  trustRemoteParents: boolean,
): () => Promise<void> {
  const ratio = new TraceIdRatioBasedSampler(cfg.sampleRatio)
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': cfg.serviceName }),
    sampler: new ParentBasedSampler({
      root: ratio,
      remoteParentSampled: new CallerSampler(cfg.sampleRatio, trustRemoteParents),
    }),
    spanProcessors: [
      new BatchSpanProcessor(
        new OTLPTraceExporter({ url: `${cfg.endpoint.replace(/\/+$/, '')}/v1/traces`, timeoutMillis: 5000 }),
        // A bounded queue: a collector that is away costs dropped spans, never memory.
        { maxQueueSize: 4096, maxExportBatchSize: 512, scheduledDelayMillis: 1000 },
      ),
    ],
  })
  provider.register(asyncContext ? {} : { contextManager: null })
  return () => provider.shutdown()
}
