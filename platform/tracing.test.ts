import { context, propagation, ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api'
import {
  AlwaysOffSampler,
  InMemorySpanExporter,
  SamplingDecision,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Sampler,
} from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  contextOf,
  inSpan,
  jobAttributes,
  pastSpan,
  traceLogFields,
  traceparentOf,
  TRUSTED_PARENT_ATTRIBUTE,
} from './tracing.js'
import { CallerSampler } from './tracing-sdk.js'

const exporter = new InMemorySpanExporter()
let provider: NodeTracerProvider

beforeAll(() => {
  provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  provider.register()
})
afterEach(() => exporter.reset())
afterAll(async () => {
  await provider.shutdown()
  trace.disable()
  context.disable()
  propagation.disable()
})

const spans = (): ReadableSpan[] => exporter.getFinishedSpans()
const CALLER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'

describe('trace context', () => {
  it('a stored traceparent continues the same trace, with the span as its parent', async () => {
    const inner = await inSpan('work', { parent: contextOf(CALLER) }, async () => traceparentOf())
    const [span] = spans()
    expect(span.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c')
    expect(span.parentSpanContext?.spanId).toBe('b7ad6b7169203331')
    // What it hands on names this span, in the same trace.
    expect(inner).toBe(`00-0af7651916cd43dd8448eb211c80319c-${span.spanContext().spanId}-01`)
  })

  it('a malformed or missing traceparent starts a trace of its own', async () => {
    for (const given of [
      undefined,
      'garbage',
      `${CALLER}${'x'.repeat(100)}`,
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
    ]) {
      await inSpan('work', { parent: contextOf(given) }, async () => {})
    }
    expect(spans()).toHaveLength(4)
    for (const s of spans()) {
      expect(s.parentSpanContext).toBeUndefined()
      expect(s.spanContext().traceId).not.toBe('0af7651916cd43dd8448eb211c80319c')
    }
  })

  it('a thrown error marks its span failed with the error code, never the message', async () => {
    const err = Object.assign(new Error('the user sent secret-ish text'), { code: 'invalid_input' })
    await expect(
      inSpan(
        'work',
        { attributes: jobAttributes({ jobId: 'job_1', utility: 'split-pdf', apiKeyId: 'key_1' }) },
        async () => {
          throw err
        },
      ),
    ).rejects.toBe(err)
    const [span] = spans()
    expect(span.status).toEqual({ code: 2, message: 'invalid_input' })
    expect(span.attributes).toMatchObject({
      'dutil.job.id': 'job_1',
      'dutil.utility': 'split-pdf',
      'dutil.api_key.id': 'key_1',
      'dutil.error.code': 'invalid_input',
    })
    expect(JSON.stringify(span.attributes)).not.toContain('secret-ish')
  })

  it('a past span covers the time it was given', () => {
    pastSpan('admission wait', { parent: contextOf(CALLER), startTime: 1_700_000_000_000, endTime: 1_700_000_002_500 })
    const [span] = spans()
    expect(span.name).toBe('admission wait')
    expect(span.duration).toEqual([2, 500_000_000])
    expect(span.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c')
  })
})

describe('log lines inside a span', () => {
  it('carry its trace and span id; outside any span, none', async () => {
    expect(traceLogFields()).toEqual({})
    const seen = await inSpan('request', {}, async (span) => ({ fields: traceLogFields(), ids: span.spanContext() }))
    expect(seen.fields).toEqual({ trace_id: seen.ids.traceId, span_id: seen.ids.spanId })
  })

  it('of a trace the sampler dropped carry nothing (they would point nowhere)', async () => {
    const tracer = new NodeTracerProvider({ sampler: new AlwaysOffSampler() }).getTracer('t')
    const fields = tracer.startActiveSpan('dropped', (span) => {
      const f = traceLogFields()
      span.end()
      return f
    })
    expect(fields).toEqual({})
  })
})

describe("callers' sampling decisions", () => {
  const remoteSampled = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  })
  const decide = (sampler: Sampler, attributes = {}) =>
    sampler.shouldSample(remoteSampled, '0af7651916cd43dd8448eb211c80319c', 'GET', SpanKind.SERVER, attributes, [])
      .decision

  it("a caller's traceparent …-01 meets the ratio: with ratio 0 nothing of it is kept", () => {
    expect(decide(new CallerSampler(0, false))).toBe(SamplingDecision.NOT_RECORD)
  })

  it('a trusted peer (the span says so) or a program whose parents are its own keeps the decision', () => {
    expect(decide(new CallerSampler(0, false), { [TRUSTED_PARENT_ATTRIBUTE]: true })).toBe(
      SamplingDecision.RECORD_AND_SAMPLED,
    )
    expect(decide(new CallerSampler(0, true))).toBe(SamplingDecision.RECORD_AND_SAMPLED)
  })
})
