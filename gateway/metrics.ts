import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export function gatewayMetrics() {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return {
    registry,
    httpRequests: new Histogram({
      name: 'dutil_http_request_duration_seconds',
      help: 'HTTP requests by route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 90],
      registers: [registry],
    }),
    jobsCreated: new Counter({ name: 'dutil_jobs_created_total', help: 'Jobs accepted by the gateway.', labelNames: ['utility', 'mode'], registers: [registry] }),
  }
}

export type GatewayMetrics = ReturnType<typeof gatewayMetrics>
