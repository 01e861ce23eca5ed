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
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue
    const rest = line.slice(name.length)
    if (rest[0] !== '{' && rest[0] !== ' ') continue
    const value = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (Number.isFinite(value)) total += value
  }
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
