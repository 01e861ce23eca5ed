import { describe, expect, it } from 'vitest'
import { DutilClient, DutilConnectionError, InternalError, JobFailedError, RateLimitedError } from './index.js'

/** A fetch that answers from a script, one entry per request, and records what it was sent. */
function scripted(...answers: Array<(req: Request) => Response | Promise<Response> | 'refuse' | 'hang'>) {
  const seen: Request[] = []
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const req = new Request(input, init)
    seen.push(req)
    const next = answers[Math.min(seen.length - 1, answers.length - 1)](req)
    if (next === 'refuse') throw new TypeError('fetch failed: connect ECONNREFUSED')
    if (next === 'hang')
      return new Promise((_, reject) =>
        req.signal.addEventListener('abort', () =>
          reject(req.signal.reason ?? new DOMException('aborted', 'AbortError')),
        ),
      )
    return next
  }
  return { fetch: fetch as typeof globalThis.fetch, seen }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })
const envelope = (code: string, status: number, headers: Record<string, string> = {}) =>
  json(status, { error: { code, message: code } }, headers)
const job = (status: string, extra: Record<string, unknown> = {}) => ({
  id: 'job_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  object: 'job',
  utility: 'split-pdf',
  mode: 'async',
  status,
  error: null,
  ...extra,
})
const client = (fetch: typeof globalThis.fetch, more: Record<string, unknown> = {}) =>
  new DutilClient({ baseUrl: 'http://dutil.test', apiKey: 'du_live_x', fetch, retryBaseMs: 1, ...more })

describe('retries', () => {
  it('retries a create after a connection error and a 503 with the same generated Idempotency-Key', async () => {
    const api = scripted(
      () => 'refuse',
      () => envelope('internal', 503),
      () => json(202, job('queued')),
    )
    const created = await client(api.fetch).submit('split-pdf', { url: 'https://example.com/a.pdf' })
    expect(created.status).toBe('queued')
    expect(api.seen).toHaveLength(3)
    const keys = api.seen.map((r) => r.headers.get('idempotency-key'))
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(new Set(keys).size).toBe(1)
    // The caller's own key is the one sent.
    const own = scripted(() => json(202, job('queued')))
    await client(own.fetch).submit('split-pdf', { url: 'https://example.com/a.pdf' }, { idempotencyKey: 'mine' })
    expect(own.seen[0].headers.get('idempotency-key')).toBe('mine')
  })

  it('does not retry a failed job (its answer is the job, with the status of its error) nor a 4xx', async () => {
    const failed = scripted(() =>
      json(502, job('failed', { mode: 'sync', error: { code: 'upstream_error', message: 'x' } })),
    )
    await expect(client(failed.fetch).run('split-pdf', { url: 'https://example.com/a.pdf' })).rejects.toBeInstanceOf(
      JobFailedError,
    )
    expect(failed.seen).toHaveLength(1)
    const invalid = scripted(() => envelope('invalid_request', 400))
    await expect(client(invalid.fetch).get('job_01ARZ3NDEKTSV4RRFFQ69G5FAV')).rejects.toMatchObject({
      code: 'invalid_request',
      status: 400,
    })
    expect(invalid.seen).toHaveLength(1)
  })

  it('gives up after maxRetries, with the last answer typed, and honours Retry-After', async () => {
    const down = scripted(() => envelope('internal', 500))
    await expect(client(down.fetch, { maxRetries: 3 }).get('job_01ARZ3NDEKTSV4RRFFQ69G5FAV')).rejects.toBeInstanceOf(
      InternalError,
    )
    expect(down.seen).toHaveLength(4)
    const limited = scripted(
      () => envelope('rate_limited', 429, { 'retry-after': '1' }),
      () => json(200, job('running')),
    )
    const started = Date.now()
    expect((await client(limited.fetch).get('job_01ARZ3NDEKTSV4RRFFQ69G5FAV')).status).toBe('running')
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    const never = scripted(() => envelope('rate_limited', 429, { 'retry-after': '1' }))
    await expect(client(never.fetch, { maxRetries: 0 }).get('job_01ARZ3NDEKTSV4RRFFQ69G5FAV')).rejects.toBeInstanceOf(
      RateLimitedError,
    )
    const refused = scripted(() => 'refuse')
    await expect(client(refused.fetch, { maxRetries: 1 }).utilities()).rejects.toBeInstanceOf(DutilConnectionError)
    expect(refused.seen).toHaveLength(2)
  })
})

describe('timeouts and signals', () => {
  it('ends a request that takes longer than timeoutMs (a long-poll gets its wait on top), then retries it', async () => {
    const slow = scripted(
      () => 'hang',
      () => json(200, job('running')),
    )
    expect((await client(slow.fetch, { timeoutMs: 50 }).get('job_01ARZ3NDEKTSV4RRFFQ69G5FAV')).status).toBe('running')
    expect(slow.seen).toHaveLength(2)
    const hung = scripted(() => 'hang')
    await expect(
      client(hung.fetch, { timeoutMs: 30, maxRetries: 1 }).get('job_01ARZ3NDEKTSV4RRFFQ69G5FAV'),
    ).rejects.toThrow(/could not be reached within 30 ms/)
    // Per call: its own timeout and retries.
    const once = scripted(() => 'hang')
    await expect(
      client(once.fetch, { timeoutMs: 10_000 }).get('job_01ARZ3NDEKTSV4RRFFQ69G5FAV', {
        requestTimeoutMs: 20,
        maxRetries: 0,
      }),
    ).rejects.toBeInstanceOf(DutilConnectionError)
    expect(once.seen).toHaveLength(1)
  })

  it("stops at once, without retrying, when the caller's signal aborts", async () => {
    const hung = scripted(() => 'hang')
    const stop = new AbortController()
    const pending = client(hung.fetch).submit(
      'split-pdf',
      { url: 'https://example.com/a.pdf' },
      { signal: stop.signal },
    )
    setTimeout(() => stop.abort(new Error('caller gave up')), 20)
    await expect(pending).rejects.toThrow('caller gave up')
    expect(hung.seen).toHaveLength(1)
  })
})
