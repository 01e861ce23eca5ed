import { Counter, Registry, collectDefaultMetrics } from 'prom-client'
import { exemplarHistogram, MetricsExposition } from '../platform/metrics-exposition.js'

/** Counts read when scraped (kept by the component that does the work). */
export interface KeyLookupCounts {
  apiLookups: number
  overBudget: number
}

/** Direct uploads completed, by where their SHA-256 came from. */
export interface DigestCounts {
  hashedInPassing: number
  readBack: number
}

export function gatewayMetrics(keyLookups?: () => KeyLookupCounts, digests?: () => DigestCounts) {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return {
    registry,
    exposition: new MetricsExposition(registry),
    // Each bucket's exemplar: the trace of a request that fell in it (OpenMetrics scrapes).
    httpRequests: exemplarHistogram(registry, {
      name: 'dutil_http_request_duration_seconds',
      help: 'HTTP requests by route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 90],
    }),
    jobsCreated: new Counter({
      name: 'dutil_jobs_created_total',
      help: 'Jobs accepted by the gateway.',
      labelNames: ['utility', 'mode'],
      registers: [registry],
    }),
    keyLookups: new Counter({
      name: 'dutil_key_lookups_total',
      help: 'Presented API keys not in the watched cache: looked up in the API server (api) or refused for want of look-up budget (over_budget).',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        if (!keyLookups) return
        const c = keyLookups()
        this.reset()
        this.inc({ outcome: 'api' }, c.apiLookups)
        this.inc({ outcome: 'over_budget' }, c.overBudget)
      },
    }),
    directUploadDigests: new Counter({
      name: 'dutil_direct_upload_digests_total',
      help: "Direct uploads completed, by where their SHA-256 came from: hashed as the parts passed through this gateway's files host (hashed_in_passing), or the file read back from storage (read_back: parts sent at once or through another replica).",
      labelNames: ['source'],
      registers: [registry],
      collect() {
        if (!digests) return
        const c = digests()
        this.reset()
        this.inc({ source: 'hashed_in_passing' }, c.hashedInPassing)
        this.inc({ source: 'read_back' }, c.readBack)
      },
    }),
  }
}

export type GatewayMetrics = ReturnType<typeof gatewayMetrics>
