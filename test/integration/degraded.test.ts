import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { tcpOpen, until } from '../platform/wait-for.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { api } from './helpers/api.js'
import { createKey } from './helpers/keys.js'
import { killComponent, startComponent } from './helpers/processes.js'

let files: FileServer
let pdf: string
beforeAll(async () => {
  files = await new FileServer().start()
  pdf = files.add('d.pdf', await makePdf(1))
})
afterAll(() => files.stop())

const port = (url: string) => Number(new URL(url).port)

describe('while Redis is down', () => {
  it('keeps serving: no rate-limit count (fail open), idempotency from the durable record, and recovers after', async () => {
    const { key } = await createKey()
    const h = { 'Idempotency-Key': `redis-down-${Date.now()}` }
    const before = await api('POST', '/v1/utilities/split-pdf/jobs', { key, body: { input: { url: pdf } }, headers: h })
    expect(before.status).toBe(202)
    killComponent('redis')
    await until('redis down', async () => !(await tcpOpen(port(inject('redisUrl')))))
    try {
      const res = await api('GET', '/v1/utilities', { key })
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit-limit')).toBe('600')
      expect(res.headers.get('ratelimit-remaining')).toBeNull()
      const replay = await api('POST', '/v1/utilities/split-pdf/jobs', {
        key,
        body: { input: { url: pdf } },
        headers: h,
      })
      expect(replay.body.id).toBe(before.body.id)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      const fresh = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url: pdf } } })
      expect(fresh.status).toBe(200)
    } finally {
      startComponent('redis')
      await until('redis up', () => tcpOpen(port(inject('redisUrl'))))
    }
    await expect
      .poll(async () => (await api('GET', '/v1/utilities', { key })).headers.get('ratelimit-remaining'), {
        timeout: 10_000,
      })
      .not.toBeNull()
  })
})

describe('while storage is down', () => {
  it('refuses a job whose input must be stored with 500 internal, Retry-After and a requestId that matches the gateway log, leaks no cause; a small one is accepted and runs once storage is back', async () => {
    const { key } = await createKey()
    const listed = async () => (await api('GET', '/v1/jobs?limit=100', { key })).body.items.length as number
    const before = await listed()
    killComponent('minio')
    let res
    let small
    try {
      // A page larger than what rides with its job (8 KB): its input is stored before the job exists.
      const html = `<p>${'A page to store first. '.repeat(600)}</p>`
      res = await api('POST', '/v1/utilities/html-pdf/jobs', { key, body: { input: { html } } })
      // A small input rides with its job (docs/adr/0043): accepted, to run once storage is back.
      small = await api('POST', '/v1/utilities/split-pdf/jobs', { key, body: { input: { url: pdf } } })
    } finally {
      startComponent('minio')
      await until('minio up', () => tcpOpen(port(inject('storage').endpoint)))
    }
    expect(res.status).toBe(500)
    expect(res.body.error.code).toBe('internal')
    expect(res.body.error.message).toBe(
      'Storage could not take the job right now; nothing was accepted, retry shortly.',
    )
    expect(res.headers.get('retry-after')).toBe('2')
    expect(res.body.error.requestId).toBe(res.headers.get('x-request-id'))
    const log = readFileSync(join(inject('platformDir'), 'logs', 'gateway.log'), 'utf8')
    const line = log.split('\n').find((l) => l.includes(res.body.error.requestId) && l.includes('request failed'))
    expect(line, 'the cause is logged with the request id').toMatch(/"cause":"[^"]+"/)
    expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|stack|minio/i)
    expect(small.status, JSON.stringify(small.body)).toBe(202)
    expect(await listed(), 'only the small job was accepted').toBe(before + 1)
    await until(
      'storage back',
      async () => (await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url: pdf } } })).status === 200,
      30_000,
      500,
    )
    await until(
      'the job accepted while storage was down succeeded',
      async () => (await api('GET', `/v1/jobs/${small.body.id}`, { key })).body.status === 'succeeded',
      120_000,
      500,
    )
  })
})
