import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { context, propagation, trace } from '@opentelemetry/api'
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import Koa from 'koa'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { traceparentOf } from '../platform/tracing.js'
import { requestId, requestLogFields } from './request-id.js'
import { RequestTraces, traceRequests } from './trace-requests.js'

const exporter = new InMemorySpanExporter()
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const lines: Array<Record<string, unknown>> = []
const traces = new RequestTraces()
const log = pino({ mixin: traces.logFields }, { write: (l: string) => void lines.push(JSON.parse(l)) })
let server: http.Server
let base: string
let handedOn: string | undefined

beforeAll(async () => {
  // As the gateway runs it: no async context.
  provider.register({ contextManager: null })
  const app = new Koa()
  app.use(traceRequests(() => '/work', traces))
  app.use(requestId)
  app.use(traces.track)
  app.use(async (ctx) => {
    log.info({ ...requestLogFields(ctx), step: 1 }, 'inside')
    if (ctx.query.pause) await new Promise((r) => setTimeout(r, Number(ctx.query.pause)))
    log.info({ ...requestLogFields(ctx), path: ctx.path }, 'later')
    handedOn = traceparentOf(ctx.state.traceContext)
    ctx.status = 204
  })
  server = http.createServer(app.callback()).listen(0, '127.0.0.1')
  await once(server, 'listening')
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.close()
  await provider.shutdown()
  trace.disable()
  context.disable()
  propagation.disable()
})

describe('a traced request without an async context', () => {
  it("continues the caller's trace, hands its own span on, and joins its log lines to it by request id", async () => {
    const caller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    const res = await fetch(`${base}/work`, { headers: { traceparent: caller, 'x-request-id': 'req-1' } })
    expect(res.status).toBe(204)
    const [span] = exporter.getFinishedSpans()
    expect(span.name).toBe('GET /work')
    expect(span.parentSpanContext?.spanId).toBe('b7ad6b7169203331')
    expect(span.attributes).toMatchObject({ 'dutil.request_id': 'req-1', 'http.response.status_code': 204 })
    const { traceId, spanId } = span.spanContext()
    expect(handedOn).toBe(`00-${traceId}-${spanId}-01`)
    expect(lines.find((l) => l.msg === 'inside')).toMatchObject({ trace_id: traceId, span_id: spanId, step: 1 })
    // Each line carries its own fields and the trace, nothing of an earlier line.
    const later = lines.find((l) => l.msg === 'later')
    expect(later).toMatchObject({ trace_id: traceId, span_id: spanId })
    expect(later).not.toHaveProperty('step')
    // Done: the request's trace is forgotten, and a line naming it no longer carries it.
    expect(traces.logFields({ requestRef: later!.requestRef })).toEqual({})
    // The span names the route pattern, never the path (which may hold a token).
    expect(span.attributes).not.toHaveProperty('url.path')
  })

  it('keeps apart the lines of two requests in flight with one X-Request-Id', async () => {
    exporter.reset()
    lines.length = 0
    const send = (pause: number) =>
      fetch(`${base}/work?pause=${pause}`, { headers: { 'x-request-id': 'same-id' } }).then((r) => r.status)
    expect(await Promise.all([send(150), send(50)])).toEqual([204, 204])
    const spans = exporter.getFinishedSpans()
    expect(spans).toHaveLength(2)
    const later = lines.filter((l) => l.msg === 'later')
    expect(later).toHaveLength(2)
    expect(later.every((l) => l.requestId === 'same-id')).toBe(true)
    expect(new Set(later.map((l) => l.requestRef)).size).toBe(2)
    // Each line carries the trace of its own request: the two traces, one line each.
    const traceIds = new Set(spans.map((s) => s.spanContext().traceId))
    expect(new Set(later.map((l) => l.trace_id))).toEqual(traceIds)
  })
})
