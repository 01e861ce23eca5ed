/**
 * Jaeger v2 (built from its Go module) as the local platform's trace backend: OTLP/HTTP in,
 * traces kept in memory, its query API and UI on loopback. Every address is named here (none of
 * Jaeger's defaults stays), so the dev platform and a test run side by side.
 */
export interface JaegerPorts {
  jaegerOtlp: number
  jaegerQuery: number
  jaegerQueryGrpc: number
  jaegerHealth: number
}

export function jaegerConfig(p: JaegerPorts): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memory_store:
        memory:
          max_traces: 20000
  jaeger_query:
    storage:
      traces: memory_store
    http:
      endpoint: 127.0.0.1:${p.jaegerQuery}
    grpc:
      endpoint: 127.0.0.1:${p.jaegerQueryGrpc}
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${p.jaegerHealth}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${p.jaegerOtlp}
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memory_store
`
}
