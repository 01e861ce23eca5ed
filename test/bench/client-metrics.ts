/**
 * What a Kubernetes component's API client did, from its /metrics (client-go's rest_client_*
 * series): requests sent, and the time they waited on the client's own rate limiter (its QPS and
 * burst settings) before going out.
 */
export interface ClientCounters {
  requests: number
  /** Seconds spent waiting on the client-side rate limiter, over every request. */
  throttledSeconds: number
}

/** Sums the series of one metric name over all its labels. */
function sumOf(text: string, name: string): number {
  let total = 0
  for (const n of seriesBy(text, name, () => '').values()) total += n
  return total
}

export function clientCounters(metricsText: string): ClientCounters {
  return {
    requests: sumOf(metricsText, 'rest_client_requests_total'),
    throttledSeconds: sumOf(metricsText, 'rest_client_rate_limiter_duration_seconds_sum'),
  }
}

/** One table row: API requests per completed job and the rate limiter's wait over the run. */
export function clientRow(component: string, before: ClientCounters, after: ClientCounters, jobs: number): string {
  const requests = after.requests - before.requests
  const waited = after.throttledSeconds - before.throttledSeconds
  return `| ${component} | ${(requests / Math.max(1, jobs)).toFixed(1)} | ${waited.toFixed(1)} s | ${requests ? ((waited * 1000) / requests).toFixed(1) : '—'} ms |`
}

export const CLIENT_TABLE_HEADER = [
  '| component | API requests per job | waited on its client rate limiter (run) | per request |',
  '|---|---|---|---|',
]

/** A metric's label sets, `a="x"` pairs; values may hold escaped quotes. */
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g

/**
 * The sum of one metric's series (Prometheus text format) grouped by a key made from each
 * series' labels (an unlabelled series has none): the API server's requests by flow schema, or
 * by verb and resource.
 */
export function seriesBy(
  text: string,
  name: string,
  keyOf: (labels: Record<string, string>) => string,
): Map<string, number> {
  const sums = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue
    const next = line[name.length]
    if (next !== '{' && next !== ' ') continue
    const labels: Record<string, string> = {}
    if (next === '{')
      for (const m of line.slice(name.length + 1, line.lastIndexOf('}')).matchAll(LABEL)) labels[m[1]!] = m[2]!
    const value = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (!Number.isFinite(value)) continue
    const key = keyOf(labels)
    sums.set(key, (sums.get(key) ?? 0) + value)
  }
  return sums
}

/** What the API server served, from its /metrics: requests by flow schema (who) and by verb and resource (what). */
export interface ServedRequests {
  byFlowSchema: Map<string, number>
  byVerb: Map<string, number>
}

export function servedRequests(apiServerMetrics: string): ServedRequests {
  return {
    // API Priority and Fairness files every request under the FlowSchema its client matched: the
    // chart's own schemas name dutil's operator and gateway, the built-in ones the kubelet
    // (system-nodes), the controller manager and the scheduler.
    byFlowSchema: seriesBy(
      apiServerMetrics,
      'apiserver_flowcontrol_dispatched_requests_total',
      (l) => l.flow_schema ?? '',
    ),
    byVerb: seriesBy(apiServerMetrics, 'apiserver_request_total', (l) =>
      [l.verb, [l.group || 'core', l.resource, l.subresource].filter(Boolean).join('/')].join(' '),
    ),
  }
}

/**
 * Rows of requests per completed job between two readings, largest first; keys that served
 * fewer than one request in twenty jobs are left out.
 */
export function requestRows(before: Map<string, number>, after: Map<string, number>, jobs: number, top = 12): string[] {
  return [...after]
    .map(([key, n]) => [key, (n - (before.get(key) ?? 0)) / Math.max(1, jobs)] as const)
    .filter(([, perJob]) => perJob >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, perJob]) => `| ${key} | ${perJob.toFixed(2)} |`)
}
