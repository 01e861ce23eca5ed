import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { exemplarHistogram, exemplarOf, MetricsExposition, wantsOpenMetrics } from './metrics-exposition.js'

describe('the metrics exposition', () => {
  const registry = new Registry()
  const latency = exemplarHistogram(registry, {
    name: 'test_latency_seconds',
    help: 'Latency.',
    labelNames: ['route'],
    buckets: [0.1, 1],
  })
  latency.observe({
    labels: { route: '/a' },
    value: 0.5,
    exemplarLabels: exemplarOf('0af7651916cd43dd8448eb211c80319c'),
  })
  latency.observe({ labels: { route: '/b' }, value: 0.05, exemplarLabels: exemplarOf(undefined) })
  const exposition = new MetricsExposition(registry)

  it('answers Prometheus text by default, without exemplars', async () => {
    const { contentType, body } = await exposition.answer(undefined)
    expect(contentType).toMatch(/^text\/plain; version=0.0.4/)
    expect(body).toContain('test_latency_seconds_bucket{le="1",route="/a"} 1')
    expect(body).not.toContain('trace_id')
  })

  it('answers OpenMetrics to a scraper that asks, with the trace id of a bucket as its exemplar', async () => {
    const { contentType, body } = await exposition.answer(
      'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
    )
    expect(contentType).toMatch(/^application\/openmetrics-text/)
    expect(body).toMatch(
      /test_latency_seconds_bucket\{le="1",route="\/a"\} 1 # \{trace_id="0af7651916cd43dd8448eb211c80319c"\} 0\.5/,
    )
    expect(body).toMatch(/test_latency_seconds_bucket\{le="0.1",route="\/b"\} 1\n/)
    expect(body.endsWith('# EOF\n')).toBe(true)
  })

  it('reads the Accept header as content negotiation does', () => {
    expect(wantsOpenMetrics('application/openmetrics-text')).toBe(true)
    expect(wantsOpenMetrics('text/plain, application/OpenMetrics-Text; q=0.3')).toBe(true)
    expect(wantsOpenMetrics('application/openmetrics-text;q=0, text/plain')).toBe(false)
    expect(wantsOpenMetrics('text/plain;version=0.0.4')).toBe(false)
    expect(wantsOpenMetrics(`${'x'.repeat(2000)},application/openmetrics-text`)).toBe(false)
  })
})
