import { describe, expect, it } from 'vitest'
import { clientCounters, clientRow } from './client-metrics.js'

const METRICS = `# HELP rest_client_requests_total [ALPHA] Number of HTTP requests
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 120
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 30
rest_client_requests_total_other 999
rest_client_rate_limiter_duration_seconds_bucket{host="h",verb="POST",le="+Inf"} 150
rest_client_rate_limiter_duration_seconds_sum{host="h",verb="POST"} 2.5
rest_client_rate_limiter_duration_seconds_sum{host="h",verb="GET"} 0.5
rest_client_rate_limiter_duration_seconds_count{host="h",verb="POST"} 150
`

describe('client metrics', () => {
  it('sums requests and rate-limiter waits over every label set, and only that metric', () => {
    expect(clientCounters(METRICS)).toEqual({ requests: 150, throttledSeconds: 3 })
  })

  it('reports requests per job and the wait per request between two readings', () => {
    const row = clientRow(
      'kube-controller-manager',
      { requests: 100, throttledSeconds: 1 },
      { requests: 300, throttledSeconds: 5 },
      20,
    )
    expect(row).toBe('| kube-controller-manager | 10.0 | 4.0 s | 20.0 ms |')
  })
})
