import { BatchV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { LABELS } from '../../contract/api-group.js'
import { objectNameOf } from '../../contract/ids.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { api } from './helpers/api.js'
import { createKey, kubeConfig } from './helpers/keys.js'
import { whileCordoned } from './helpers/node.js'

let files: FileServer
let pdf: string
beforeAll(async () => {
  files = await new FileServer().start()
  pdf = files.add('c.pdf', await makePdf(2))
})
afterAll(() => files.stop())

const run = (
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
  route = '/v1/utilities/split-pdf/jobs',
) => api('POST', route, { key, body, headers })
const podsOf = async (id: string) =>
  (
    await kubeConfig()
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: 'dutil', labelSelector: `${LABELS.jobId}=${objectNameOf(id)}` })
  ).items

describe('request rules', () => {
  it('reads an empty body as {} and refuses it for lacking input', async () => {
    const { key } = await createKey()
    const res = await api('POST', '/v1/utilities/split-pdf', {
      key,
      rawBody: '',
      headers: { 'Content-Type': 'application/json' },
    })
    expect(res.status).toBe(400)
    expect(res.body.error.details).toEqual([{ path: 'input', message: 'is required' }])
  })

  it('refuses malformed JSON with 400 invalid_request', async () => {
    const { key } = await createKey()
    const res = await api('POST', '/v1/utilities/split-pdf', {
      key,
      rawBody: '{"input": ',
      headers: { 'Content-Type': 'application/json' },
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({
      code: 'invalid_request',
      details: [{ path: '(root)', message: 'is not valid JSON' }],
    })
  })

  it('refuses callbackUrl on the sync route', async () => {
    const { key } = await createKey()
    const res = await api('POST', '/v1/utilities/split-pdf', {
      key,
      body: { input: { url: pdf }, callbackUrl: 'https://hooks.example.com/x' },
    })
    expect(res.status).toBe(400)
    expect(res.body.error.details).toEqual([{ path: 'callbackUrl', message: 'is not allowed on a sync run' }])
  })

  it('treats Prefer: respond-async on the sync route as the async route, and refuses other Prefer values', async () => {
    const { key } = await createKey()
    const res = await run(key, { input: { url: pdf } }, { Prefer: 'respond-async' }, '/v1/utilities/split-pdf')
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({ mode: 'async', status: 'queued' })
    expect(res.headers.get('location')).toBe(`/v1/jobs/${res.body.id}`)
    const bad = await run(key, { input: { url: pdf } }, { Prefer: 'wait=10' }, '/v1/utilities/split-pdf')
    expect(bad.status).toBe(400)
    expect(bad.body.error.details[0].path).toBe('Prefer')
  })

  it('echoes X-Request-Id, makes one when absent, and refuses one over 64 characters', async () => {
    const { key } = await createKey()
    expect(
      (await api('GET', '/v1/utilities', { key, headers: { 'X-Request-Id': 'abc-123' } })).headers.get('x-request-id'),
    ).toBe('abc-123')
    expect((await api('GET', '/v1/utilities', { key })).headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/)
    const long = await api('GET', '/v1/utilities', { key, headers: { 'X-Request-Id': 'x'.repeat(65) } })
    expect(long.status).toBe(400)
    expect(long.headers.get('x-request-id')).toMatch(/^req_/)
  })

  it('refuses an Idempotency-Key over 200 characters', async () => {
    const { key } = await createKey()
    const res = await run(key, { input: { url: pdf } }, { 'Idempotency-Key': 'k'.repeat(201) })
    expect(res.status).toBe(400)
    expect(res.body.error.details[0].path).toBe('Idempotency-Key')
  })

  it('answers unknown routes and methods with 404 in the envelope', async () => {
    const { key } = await createKey()
    const res = await api('GET', '/v1/nothing-here', { key })
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('not_found')
    const method = await api('DELETE', '/v1/utilities', { key })
    expect(method.status).toBe(404)
    expect(method.body.error.message).toBe('No route DELETE /v1/utilities.')
  })

  it('refuses empty X-Request-Id and Idempotency-Key headers', async () => {
    const { key } = await createKey()
    expect((await api('GET', '/v1/utilities', { key, headers: { 'X-Request-Id': '' } })).status).toBe(400)
    expect((await run(key, { input: { url: pdf } }, { 'Idempotency-Key': '' })).status).toBe(400)
  })
})

describe('keys', () => {
  it('refuses an expired key with 401 saying it expired', async () => {
    const created = await createKey({ expiresInDays: 30 })
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        {
          group: 'dutil.io',
          version: 'v1alpha1',
          namespace: 'dutil',
          plural: 'apikeys',
          name: objectNameOf(created.id),
          body: { spec: { expiresAt: new Date(Date.now() - 1000).toISOString() } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
    await expect
      .poll(async () => (await api('GET', '/v1/utilities', { key: created.key })).status, { timeout: 5000 })
      .toBe(401)
    const res = await api('GET', '/v1/utilities', { key: created.key })
    expect(res.body.error.message).toMatch(/expired/)
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
  })

  it('records lastUsedAt, at most once a minute', async () => {
    const created = await createKey()
    const read = async () =>
      (
        (await kubeConfig()
          .makeApiClient(CustomObjectsApi)
          .getNamespacedCustomObject({
            group: 'dutil.io',
            version: 'v1alpha1',
            namespace: 'dutil',
            plural: 'apikeys',
            name: objectNameOf(created.id),
          })) as { status?: { lastUsedAt?: string } }
      ).status?.lastUsedAt
    expect(await read()).toBeUndefined()
    await api('GET', '/v1/utilities', { key: created.key })
    await expect.poll(read, { timeout: 5000 }).toBeTruthy()
    const first = await read()
    await new Promise((r) => setTimeout(r, 1100))
    await api('GET', '/v1/utilities', { key: created.key })
    await new Promise((r) => setTimeout(r, 1000))
    expect(await read()).toBe(first)
  })
})

describe('rate limit', () => {
  it('counts every /v1 request per key in a one-minute window and answers 429 with Retry-After', async () => {
    const { key } = await createKey({ rateLimitPerMinute: 3 })
    const other = await createKey({ rateLimitPerMinute: 3 })
    const first = await api('GET', '/v1/utilities', { key })
    expect(first.headers.get('ratelimit-limit')).toBe('3')
    expect(first.headers.get('ratelimit-remaining')).toBe('2')
    const reset = Number(first.headers.get('ratelimit-reset'))
    expect(reset).toBeGreaterThanOrEqual(1)
    expect(reset).toBeLessThanOrEqual(60)
    await api('GET', '/v1/jobs/job_01ARZ3NDEKTSV4RRFFQ69G5FAV', { key }) // polling counts too (a 404 here)
    expect((await api('GET', '/v1/utilities', { key })).headers.get('ratelimit-remaining')).toBe('0')
    const over = await api('GET', '/v1/utilities', { key })
    if (over.status !== 429) {
      // The window turned over between requests; the next three fit again. Rare, and not a failure.
      expect(Number(over.headers.get('ratelimit-remaining'))).toBe(2)
      return
    }
    expect(over.body.error.code).toBe('rate_limited')
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(over.headers.get('ratelimit-remaining')).toBe('0')
    // Another key is not affected.
    expect((await api('GET', '/v1/utilities', { key: other.key })).status).toBe(200)
  })
})

describe('idempotency', () => {
  it('replays the original job for a retry, even with a different body, with Idempotent-Replayed: true', async () => {
    const { key } = await createKey()
    const h = { 'Idempotency-Key': `order-${Date.now()}` }
    const first = await run(key, { input: { url: pdf }, metadata: { n: 1 } }, h)
    expect(first.status).toBe(202)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const again = await run(key, { input: { url: `${pdf}?other` }, metadata: { n: 2 } }, h)
    expect(again.status).toBe(202)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body.id).toBe(first.body.id)
    expect(again.body.metadata).toEqual({ n: 1 })
    // An invalid body is refused as such (nothing is lost: the original job stays).
    const invalidBody = await run(key, { nonsense: true }, h)
    expect(invalidBody.status).toBe(400)
  })

  it('answers 409 conflict when a key is reused for a different utility', async () => {
    const { key } = await createKey()
    const h = { 'Idempotency-Key': `cross-${Date.now()}` }
    const first = await run(key, { input: { url: pdf } }, h)
    expect(first.status).toBe(202)
    const other = await run(key, { input: { url: 'https://example.com/a.zip' } }, h, '/v1/utilities/unzip-files/jobs')
    expect(other.status).toBe(409)
    expect(other.body.error).toMatchObject({ code: 'conflict', message: expect.stringContaining('split-pdf') })
  })

  it('scopes keys to the API key that sent them', async () => {
    const a = await createKey()
    const b = await createKey()
    const h = { 'Idempotency-Key': 'same-everywhere' }
    const ja = await run(a.key, { input: { url: pdf } }, h)
    const jb = await run(b.key, { input: { url: pdf } }, h)
    expect(jb.body.id).not.toBe(ja.body.id)
  })

  it('resolves concurrent requests with one key to one job', async () => {
    const { key } = await createKey()
    const h = { 'Idempotency-Key': `burst-${Date.now()}` }
    const all = await Promise.all(Array.from({ length: 8 }, () => run(key, { input: { url: pdf } }, h)))
    expect(new Set(all.map((r) => r.body.id)).size).toBe(1)
    expect(all.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(7)
    const list = await api('GET', '/v1/jobs', { key })
    expect(list.body.items).toHaveLength(1)
  })

  it('survives a Redis flush: a retry after it still returns the original job', async () => {
    const { key } = await createKey()
    const h = { 'Idempotency-Key': `flush-${Date.now()}` }
    const first = await run(key, { input: { url: pdf } }, h)
    const redis = new Redis(inject('redisUrl'))
    await redis.flushall()
    redis.disconnect()
    const again = await run(key, { input: { url: pdf } }, h)
    expect(again.body.id).toBe(first.body.id)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
  })
})

describe('job list', () => {
  it("lists a key's jobs newest first with exactly the summary fields, filters and pages with a cursor", async () => {
    const { key } = await createKey({ name: 'lister' })
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await run(key, { input: { url: pdf }, metadata: { i } })).body.id)
    const bad = await run(key, { input: { url: `${files.url}/status/404` } }, {}, '/v1/utilities/split-pdf')
    expect(bad.body.status).toBe('failed')
    ids.push(bad.body.id)
    const all = await api('GET', '/v1/jobs?limit=100', { key })
    expect(all.status).toBe(200)
    expect(all.body.items.map((s: { id: string }) => s.id)).toEqual([...ids].reverse())
    expect(all.body.nextCursor).toBeNull()
    const summary = all.body.items[0]
    expect(Object.keys(summary).sort()).toEqual(
      [
        'apiKeyName',
        'createdAt',
        'errorCode',
        'fileCount',
        'finishedAt',
        'id',
        'mode',
        'source',
        'status',
        'totalMs',
        'upstreamMs',
        'userEmail',
        'utility',
      ].sort(),
    )
    expect(summary).toMatchObject({
      id: bad.body.id,
      status: 'failed',
      errorCode: 'upstream_rejected',
      apiKeyName: 'lister',
      userEmail: null,
      source: 'api',
      fileCount: 0,
      mode: 'sync',
    })

    const failed = await api('GET', '/v1/jobs?status=failed', { key })
    expect(failed.body.items.map((s: { id: string }) => s.id)).toEqual([bad.body.id])
    expect((await api('GET', '/v1/jobs?utility=zip-files', { key })).body.items).toEqual([])

    // Page by two while new jobs arrive between pages: nothing twice, nothing skipped.
    const seen: string[] = []
    let cursor: string | null = null
    let page = 0
    do {
      const res: any = await api('GET', `/v1/jobs?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key })
      expect(res.status).toBe(200)
      seen.push(...res.body.items.map((s: { id: string }) => s.id))
      cursor = res.body.nextCursor
      if (page++ === 0) await run(key, { input: { url: pdf } })
    } while (cursor)
    expect(seen).toEqual([...ids].reverse())
  })

  it('answers 400 for every bad filter', async () => {
    const { key } = await createKey()
    for (const q of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'status=done',
      'utility=pdf-to-words',
      'cursor=not-a-cursor',
      'limit=1&limit=2',
    ]) {
      const res = await api('GET', `/v1/jobs?${q}`, { key })
      expect(res.status, q).toBe(400)
      expect(res.body.error.code).toBe('invalid_request')
    }
  })
})

describe('cancel', () => {
  it('cancels a queued job: 200 cancelled with finishedAt, and its Job never runs', async () => {
    const { key } = await createKey()
    let id = ''
    await whileCordoned(async () => {
      const res = await run(key, { input: { url: pdf } })
      id = res.body.id
      expect(res.status).toBe(202)
      const cancel = await api('POST', `/v1/jobs/${res.body.id}/cancel`, { key })
      expect(cancel.status).toBe(200)
      expect(cancel.body).toMatchObject({
        id: res.body.id,
        status: 'cancelled',
        startedAt: null,
        result: null,
        error: null,
      })
      expect(cancel.body.finishedAt).toMatch(/Z$/)
      const jobs = await kubeConfig()
        .makeApiClient(BatchV1Api)
        .listNamespacedJob({ namespace: 'dutil', labelSelector: `${LABELS.jobId}=${objectNameOf(res.body.id)}` })
      expect(jobs.items.filter((j) => !j.metadata?.deletionTimestamp)).toEqual([])
      const again = await api('POST', `/v1/jobs/${res.body.id}/cancel`, { key })
      expect(again.status).toBe(409)
      expect(again.body.error.code).toBe('conflict')
    })
    const list = await api('GET', '/v1/jobs?status=cancelled', { key })
    expect(list.body.items).toHaveLength(1)
    // With the node schedulable again, nothing of the cancelled job runs.
    await new Promise((r) => setTimeout(r, 2000))
    expect((await podsOf(id)).filter((p) => p.status?.phase === 'Running' || p.status?.phase === 'Succeeded')).toEqual(
      [],
    )
    expect((await api('GET', `/v1/jobs/${id}`, { key })).body.status).toBe('cancelled')
  })

  it("answers 409 for a running job and for a finished one, 404 for another key's", async () => {
    const { key } = await createKey()
    files.add('slow-c.pdf', await makePdf(1))
    const slow = await run(key, { input: { url: `${files.url}/slow/slow-c.pdf?ms=3000` } })
    await expect
      .poll(async () => (await api('GET', `/v1/jobs/${slow.body.id}`, { key })).body.status, {
        timeout: 20_000,
        interval: 100,
      })
      .toBe('running')
    const running = await api('POST', `/v1/jobs/${slow.body.id}/cancel`, { key })
    expect(running.status).toBe(409)
    expect(running.body.error.message).toContain('running')
    const done = await api('GET', `/v1/jobs/${slow.body.id}?wait=30`, { key })
    expect(done.body.status).toBe('succeeded')
    expect((await podsOf(slow.body.id)).length).toBeGreaterThan(0)
    expect((await api('POST', `/v1/jobs/${slow.body.id}/cancel`, { key })).status).toBe(409)
    const other = await createKey()
    expect((await api('POST', `/v1/jobs/${slow.body.id}/cancel`, { key: other.key })).status).toBe(404)
  })
})

describe('catalog', () => {
  it('lists only the utilities a key may call, with schema and example', async () => {
    const all = await createKey()
    const res = await api('GET', '/v1/utilities', { key: all.key })
    expect(res.status).toBe(200)
    const split = res.body.items.find((u: { slug: string }) => u.slug === 'split-pdf')
    expect(split).toMatchObject({
      slug: 'split-pdf',
      name: 'Split PDF',
      category: 'pdf',
      target: 'pdf',
      maxDurationSeconds: 900,
      enabled: true,
      exampleInput: { url: expect.any(String) },
    })
    expect(split.inputSchema).toMatchObject({ type: 'object', required: ['url'], additionalProperties: false })
    const scoped = await createKey({ utilities: ['zip-files'] })
    expect(
      (await api('GET', '/v1/utilities', { key: scoped.key })).body.items.map((u: { slug: string }) => u.slug),
    ).not.toContain('split-pdf')
    expect((await api('GET', '/v1/utilities/split-pdf', { key: all.key })).body.slug).toBe('split-pdf')
    expect((await api('GET', '/v1/utilities/nope', { key: all.key })).status).toBe(404)
  })
})
