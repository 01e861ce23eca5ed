import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import type { TracingConfig } from './tracing.js'

/**
 * The OpenTelemetry SDK, loaded by startTracing only when tracing is on: spans batched to an
 * OTLP/HTTP collector (protobuf: smaller and cheaper to encode than JSON), new traces sampled at
 * the configured ratio, continued ones as their caller decided, W3C trace context as the
 * propagator, and async context through AsyncLocalStorage unless the program asks for none
 * (`asyncContext` false: the gateway passes each request's context by hand).
 */
export function startTracingSdk(cfg: TracingConfig, asyncContext: boolean): () => Promise<void> {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': cfg.serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(cfg.sampleRatio) }),
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
