import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { api } from './helpers/api.js'
import { FileServer } from '../support/file-server.js'
import { createKey, keyAdmin } from './helpers/keys.js'
import { makePdf } from '../support/pdfs.js'

let files: FileServer
beforeAll(async () => {
  files = await new FileServer().start()
})
afterAll(() => files.stop())

describe('authentication', () => {
  it('without a bearer key answers 401 with WWW-Authenticate: Bearer', async () => {
    const res = await api('GET', '/v1/jobs/job_01ARZ3NDEKTSV4RRFFQ69G5FAV')
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
    expect(res.body.error.code).toBe('unauthorized')
    expect(res.headers.get('x-request-id')).toBeTruthy()
  })

  it('with an unknown key answers 401 with error="invalid_token"', async () => {
    const res = await api('GET', '/v1/utilities', { key: `du_live_${'0'.repeat(48)}` })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
  })

  it('with a revoked key answers 401 saying it was revoked, at once', async () => {
    const created = await createKey()
    expect((await api('GET', '/v1/utilities', { key: created.key })).status).toBe(200)
    await keyAdmin().revoke(created.id)
    await expect
      .poll(async () => (await api('GET', '/v1/utilities', { key: created.key })).status, { timeout: 5000 })
      .toBe(401)
    const res = await api('GET', '/v1/utilities', { key: created.key })
    expect(res.body.error.message).toMatch(/revoked/)
  })

  it('with a key scoped to other utilities answers 403 on split-pdf', async () => {
    const created = await createKey({ utilities: ['zip-files'] })
    const res = await api('POST', '/v1/utilities/split-pdf', {
      key: created.key,
      body: { input: { url: 'https://example.com/a.pdf' } },
    })
    expect(res.status).toBe(403)
    expect(res.body.error.code).toBe('forbidden')
  })
})

describe('jobs', () => {
  it("answers 404 for an unknown job id and for another key's job", async () => {
    const a = await createKey()
    const b = await createKey()
    const unknown = await api('GET', '/v1/jobs/job_01ARZ3NDEKTSV4RRFFQ69G5FAV', { key: a.key })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.code).toBe('not_found')
    const url = files.add('a.pdf', await makePdf(1))
    const job = await api('POST', '/v1/utilities/split-pdf/jobs', { key: a.key, body: { input: { url } } })
    expect(job.status).toBe(202)
    const other = await api('GET', `/v1/jobs/${job.body.id}`, { key: b.key })
    expect(other.status).toBe(404)
    expect((await api('GET', `/v1/jobs/${job.body.id}`, { key: a.key })).status).toBe(200)
  })

  it('refuses a body without input with details, and creates nothing', async () => {
    const { key } = await createKey()
    const res = await api('POST', '/v1/utilities/split-pdf', { key, body: { inptu: {} } })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { path: 'input', message: 'is required' },
        { path: 'inptu', message: 'is not an allowed field' },
      ]),
    )
  })

  it('answers 404 in the envelope for an unknown utility', async () => {
    const { key } = await createKey()
    const res = await api('POST', '/v1/utilities/pdf-to-words', { key, body: { input: {} } })
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('not_found')
  })
})
