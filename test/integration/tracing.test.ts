import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { api } from './helpers/api.js'
import { callbackInputs } from './helpers/callback-inputs.js'
import { databaseClient } from './helpers/database.js'
import { createKey } from './helpers/keys.js'

/**
 * One trace per job, read back from Jaeger's query API: the suite's gateway, operator and
 * runners send their spans to the Jaeger the test platform runs (docs/observability.md).
 */

interface JaegerSpan {
  traceID: string
  spanID: string
  operationName: string
  references: { refType: string; traceID: string; spanID: string }[]
  processID: string
  tags: { key: string; value: unknown }[]
}
interface JaegerTrace {
  spans: JaegerSpan[]
  processes: Record<string, { serviceName: string }>
}

interface Span {
  id: string
  name: string
  service: string
  parent: string | undefined
  tags: Record<string, unknown>
}

const inputs = callbackInputs(3)

/** The trace's spans as Jaeger has them, each with its service and parent. */
async function traceSpans(traceId: string): Promise<Span[]> {
  const res = await fetch(`${inject('tracesUrl')}/api/traces/${traceId}`)
  if (res.status === 404) return []
  expect(res.status).toBe(200)
  const body = (await res.json()) as { data: JaegerTrace[] }
  const [trace] = body.data
  if (!trace) return []
  return trace.spans.map((s) => ({
    id: s.spanID,
    name: s.operationName,
    service: trace.processes[s.processID].serviceName,
    parent: s.references.find((r) => r.refType === 'CHILD_OF')?.spanID,
    tags: Object.fromEntries(s.tags.map((t) => [t.key, t.value])),
  }))
}

/** Waits until the trace holds every named span (spans arrive in batches, from several programs). */
async function waitForSpans(
  traceId: string,
  names: string[],
  also: Array<{ what: string; seen: (s: Span) => boolean }> = [],
): Promise<Span[]> {
  let spans: Span[] = []
  await expect
    .poll(
      async () => {
        spans = await traceSpans(traceId)
        return [
          ...names.filter((n) => !spans.some((s) => s.name === n)),
          ...also.filter((a) => !spans.some(a.seen)).map((a) => a.what),
        ]
      },
      { timeout: 30_000, interval: 500 },
    )
    .toEqual([])
  return spans
}

const one = (spans: Span[], name: string): Span => {
  const found = spans.filter((s) => s.name === name)
  expect(found, name).toHaveLength(1)
  return found[0]
}

/** A caller's own trace context, as a client with tracing sends it. */
function callerContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

/** The trace context the job record keeps for a job (its `traceparent` column). */
async function recordedTraceparent(jobId: string): Promise<string> {
  const db = databaseClient(inject('databaseUrl'))
  try {
    const { rows } = await db.query<{ traceparent: string }>('SELECT traceparent FROM jobs WHERE id = $1', [jobId])
    return rows[0].traceparent
  } finally {
    await db.end()
  }
}

describe('one trace per job', () => {
  it('holds the API call, the admission wait, the runner download/work/upload and the callback attempt, parent-linked', async () => {
    const { key, id: keyId } = await createKey()
    const caller = callerContext()
    const path = '/traced/succeeded'
    const res = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key,
      headers: { traceparent: caller.traceparent },
      body: { input: { url: inputs.pdfUrl }, callbackUrl: inputs.receiver.url(path, 204) },
    })
    expect(res.status).toBe(202)
    const jobId = res.body.id as string
    const [callback] = await inputs.receiver.waitFor(path, 1)

    const spans = await waitForSpans(caller.traceId, [
      'POST /v1/utilities/:slug/jobs',
      'admission wait',
      'create batch Job',
      'runner',
      // Its input rode with the job, sealed (docs/adr/0043): opened, not downloaded.
      'open input',
      'work',
      'upload',
      'store manifest',
      'check result',
      'write status',
      'callback attempt',
    ])
    const request = one(spans, 'POST /v1/utilities/:slug/jobs')
    expect(request).toMatchObject({ service: 'dutil-gateway', parent: caller.spanId })
    expect(request.tags).toMatchObject({ 'dutil.job.id': jobId, 'http.response.status_code': 202 })

    // The operator's and the runner's work hangs off the call that made the job. (A pass on a
    // cache that lags may try the create or the result check again: each try is a span.)
    for (const name of ['admission wait', 'callback attempt'])
      expect(one(spans, name), name).toMatchObject({ service: 'dutil-operator', parent: request.id })
    for (const s of spans.filter((x) => ['create batch Job', 'check result', 'write status'].includes(x.name)))
      expect(s, s.name).toMatchObject({ service: 'dutil-operator', parent: request.id })
    expect(spans.find((s) => s.name === 'check result' && s.tags['dutil.result.outcome'] === 'accepted')).toBeDefined()
    expect(spans.find((s) => s.name === 'write status' && s.tags['dutil.job.state'] === 'succeeded')).toBeDefined()
    expect(one(spans, 'admission wait').tags).toMatchObject({
      'dutil.job.id': jobId,
      'dutil.utility': 'split-pdf',
      'dutil.api_key.id': keyId,
    })
    const runner = one(spans, 'runner')
    expect(runner).toMatchObject({ service: 'dutil-runner-split-pdf', parent: request.id })
    for (const name of ['open input', 'work', 'store manifest'])
      expect(one(spans, name), name).toMatchObject({ service: 'dutil-runner-split-pdf', parent: runner.id })
    const work = one(spans, 'work')
    expect(work.tags).toMatchObject({ 'dutil.result.files': 3, 'dutil.result.pageCount': 3 })
    // Each page's upload, inside the work that made it.
    const uploads = spans.filter((s) => s.name === 'upload')
    expect(uploads).toHaveLength(3)
    for (const u of uploads) expect(u.parent).toBe(work.id)
    // No span carries the API key itself.
    expect(JSON.stringify(spans)).not.toContain(key)

    // The receiver was handed the attempt's context: its own tracing would continue this trace.
    const attempt = one(spans, 'callback attempt')
    expect(callback.headers.traceparent).toBe(`00-${caller.traceId}-${attempt.id}-01`)
    expect(attempt.tags).toMatchObject({ 'http.response.status_code': 204, 'dutil.callback.attempt': 1 })

    // Log lines join the trace: the gateway's of the call, the operator's of the job's passes.
    const lines = (program: string) =>
      readFileSync(join(inject('platformDir'), 'logs', `${program}.log`), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    const access = lines('gateway').find((l) => l.msg === 'request' && l.jobId === jobId)
    expect(access).toMatchObject({ trace_id: caller.traceId, span_id: request.id })
    const created = lines('operator').find((l) => l.msg === 'job created' && l.jobId === jobId)
    expect(created).toMatchObject({ trace_id: caller.traceId })

    // The latency histograms link a bucket to a trace: the call's, the job's (OpenMetrics scrapes).
    const openMetrics = { accept: 'application/openmetrics-text;version=1.0.0' }
    const gatewayMetrics = await (await fetch(`${inject('gatewayUrl')}/metrics`, { headers: openMetrics })).text()
    expect(gatewayMetrics).toMatch(
      new RegExp(
        `dutil_http_request_duration_seconds_bucket\\{[^}]*route="/v1/utilities/:slug/jobs"[^}]*status="202"[^}]*\\} \\d+ # \\{trace_id="${caller.traceId}"\\}`,
      ),
    )
    const operatorPort = inject('programEnv').DUTIL_OPERATOR_PORT
    const operatorMetrics = await (
      await fetch(`http://127.0.0.1:${operatorPort}/metrics`, { headers: openMetrics })
    ).text()
    expect(operatorMetrics).toMatch(
      new RegExp(
        `dutil_runner_duration_seconds_bucket\\{[^}]*utility="split-pdf"[^}]*\\} \\d+ # \\{trace_id="${caller.traceId}"\\}`,
      ),
    )
    // A scraper that does not ask for OpenMetrics gets Prometheus' text, without exemplars.
    const plain = await (await fetch(`${inject('gatewayUrl')}/metrics`)).text()
    expect(plain).toContain('dutil_http_request_duration_seconds_bucket')
    expect(plain).not.toContain('trace_id')

    // The job record keeps the context the job's UtilityJob had.
    expect(await recordedTraceparent(jobId)).toBe(`00-${caller.traceId}-${request.id}-01`)
  })

  it('marks the failing span of a failed job with its error code, and starts a trace of its own without a caller context', async () => {
    const { key } = await createKey()
    const res = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url: inputs.notPdfUrl } } })
    expect(res.body.status).toBe('failed')
    const code = res.body.error.code as string
    const [, traceId, requestSpan] = (await recordedTraceparent(res.body.id as string)).split('-')
    // The job writes its status more than once (running, then failed); the spans of each write
    // reach the collector in the operator's export batches, so wait for the failed one itself.
    const failedWrite = (s: Span) => s.name === 'write status' && s.tags['dutil.job.state'] === 'failed'
    const spans = await waitForSpans(
      traceId,
      ['POST /v1/utilities/:slug', 'runner', 'work'],
      [{ what: 'write status (failed)', seen: failedWrite }],
    )
    const request = one(spans, 'POST /v1/utilities/:slug')
    expect(request.id).toBe(requestSpan)
    expect(request.parent).toBeUndefined()
    const work = one(spans, 'work')
    expect(work.tags).toMatchObject({ error: true, 'otel.status_code': 'ERROR', 'dutil.error.code': code })
    expect(one(spans, 'runner').tags).toMatchObject({ error: true, 'dutil.error.code': code })
    const failed = spans.find(failedWrite)
    expect(failed?.tags).toMatchObject({ error: true, 'dutil.error.code': code })
    // Nothing the user sent is in a span: not the page it pointed at, not the runner's message.
    expect(JSON.stringify(spans)).not.toContain(res.body.error.message)
  })
})
