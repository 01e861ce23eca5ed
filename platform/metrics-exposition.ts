import { Histogram, type HistogramConfiguration, type Metric, Registry } from 'prom-client'

/**
 * A registry's metrics in the exposition the scraper asks for: Prometheus' text format by
 * default, OpenMetrics (which alone carries exemplars: a latency bucket's trace id) when its
 * Accept header names `application/openmetrics-text`, as Prometheus' does. Both read the same
 * metric objects.
 */
export class MetricsExposition {
  private open: Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE> | undefined

  constructor(private readonly registry: Registry) {}

  async answer(accept: string | undefined): Promise<{ contentType: string; body: string }> {
    const r = wantsOpenMetrics(accept) ? this.openMetrics() : this.registry
    return { contentType: r.contentType, body: await r.metrics() }
  }

  private openMetrics(): Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE> {
    if (!this.open) {
      // prom-client types the registry's constructor without its content type, and its metrics as
      // plain objects; both are what its JavaScript takes.
      const OpenRegistry = Registry as unknown as new (
        type: typeof Registry.OPENMETRICS_CONTENT_TYPE,
      ) => Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE>
      const open = new OpenRegistry(Registry.OPENMETRICS_CONTENT_TYPE)
      for (const metric of this.registry.getMetricsAsArray()) open.registerMetric(metric as unknown as Metric)
      this.open = open
    }
    return this.open
  }
}

/** Whether an Accept header (bounded: the first 1 KB) asks for OpenMetrics with a non-zero weight. */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  if (!accept) return false
  return accept
    .slice(0, 1024)
    .split(',')
    .some((part) => {
      const [type, ...params] = part.trim().toLowerCase().split(';')
      if (type.trim() !== 'application/openmetrics-text') return false
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
      return q === undefined || Number(q.slice(2)) > 0
    })
}

/** An exemplar's labels for a trace id (none without one: the observation is kept, unlinked). */
export function exemplarOf(traceId: string | undefined): Record<string, string> {
  return traceId ? { trace_id: traceId } : {}
}

/**
 * A histogram whose buckets keep an exemplar (the trace id of an observation), registered in a
 * Prometheus-text registry: that exposition leaves exemplars out, the OpenMetrics one shows them.
 * (prom-client refuses `registers` of the text kind for such a metric, not the metric itself.)
 */
export function exemplarHistogram<T extends string>(
  registry: Registry,
  config: Omit<HistogramConfiguration<T>, 'registers' | 'enableExemplars'>,
): Histogram<T> {
  const h = new Histogram<T>({ ...config, enableExemplars: true, registers: [] })
  registry.registerMetric(h)
  return h
}
