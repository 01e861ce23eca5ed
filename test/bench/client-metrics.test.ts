import { describe, expect, it } from 'vitest'
import { clientCounters, clientRow, requestRows, servedRequests } from './client-metrics.js'

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

const API_SERVER = `# TYPE apiserver_flowcontrol_dispatched_requests_total counter
apiserver_flowcontrol_dispatched_requests_total{flow_schema="dutil-dutil-operator",priority_level="dutil-dutil-operator"} 500
apiserver_flowcontrol_dispatched_requests_total{flow_schema="system-nodes",priority_level="system"} 40
apiserver_flowcontrol_dispatched_requests_total{flow_schema="dutil-dutil-api",priority_level="dutil-dutil-api"} 101
apiserver_request_total{code="201",component="apiserver",group="dutil.io",resource="utilityjobs",scope="resource",subresource="",verb="POST",version="v1"} 90
apiserver_request_total{code="200",component="apiserver",group="dutil.io",resource="utilityjobs",scope="resource",subresource="status",verb="PATCH",version="v1"} 170
apiserver_request_total{code="409",component="apiserver",group="dutil.io",resource="utilityjobs",scope="resource",subresource="status",verb="PATCH",version="v1"} 10
apiserver_request_total{code="201",component="apiserver",group="",resource="events",scope="resource",subresource="",verb="POST",version="v1"} 2
apiserver_request_total_other{verb="GET"} 1000
`

describe('requests the API server served', () => {
  it('groups requests by flow schema and by verb and resource, summing response codes', () => {
    const served = servedRequests(API_SERVER)
    expect(Object.fromEntries(served.byFlowSchema)).toEqual({
      'dutil-dutil-operator': 500,
      'system-nodes': 40,
      'dutil-dutil-api': 101,
    })
    expect(Object.fromEntries(served.byVerb)).toEqual({
      'POST dutil.io/utilityjobs': 90,
      'PATCH dutil.io/utilityjobs/status': 180,
      'POST core/events': 2,
    })
  })

  it('reports requests per job between two readings, largest first, without the rare ones', () => {
    const before = new Map([
      ['dutil-dutil-operator', 100],
      ['system-nodes', 40],
      ['dutil-dutil-api', 1],
    ])
    const after = new Map([
      ['dutil-dutil-operator', 500],
      ['system-nodes', 41],
      ['dutil-dutil-api', 101],
      ['probes', 60],
    ])
    expect(requestRows(before, after, 100)).toEqual([
      '| dutil-dutil-operator | 4.00 |',
      '| dutil-dutil-api | 1.00 |',
      '| probes | 0.60 |',
    ])
  })
})
