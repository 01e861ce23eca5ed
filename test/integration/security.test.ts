import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { api, download } from './helpers/api.js'
import { createKey } from './helpers/keys.js'

/**
 * Attacks a review found (docs/security.md), performed as a tenant holding one ordinary key
 * would, against the real platform. Each failed before its fix.
 */
let files: FileServer
beforeAll(async () => {
  files = await new FileServer().start()
})
afterAll(() => files.stop())

describe('s3:// inputs across tenants', () => {
  it("refuses another tenant's outputs, the service's own records and every spelling trick with 404, and creates no job", async () => {
    const a = await createKey({ name: 'tenant-a' })
    const b = await createKey({ name: 'tenant-b' })
    const bucket = inject('storage').bucket
    const secret = await api('POST', '/v1/utilities/split-pdf', { key: a.key, body: { input: { url: files.add('secret.pdf', await makePdf(2)) } } })
    expect(secret.status).toBe(200)
    const pageKey: string = secret.body.result.files[1].key
    const jobA: string = secret.body.id
    const attempts = [
      ['split-pdf', `s3://${bucket}/${pageKey}`],
      ['html-pdf', `s3://${bucket}/_jobs/${jobA}/input.json`],
      ['html-pdf', `s3://${bucket}/_jobs/${jobA}/result.json`],
      ['unzip-files', `s3://${bucket}/usage/daily/${secret.body.createdAt.slice(0, 10)}.json`],
      ['split-pdf', `s3://${bucket}/${pageKey.replace(/[^/]+$/, '')}..%2F..%2F..%2F_jobs%2F${jobA}%2Finput.json`],
      ['split-pdf', `s3://${bucket.toUpperCase()}/${pageKey}`],
      ['split-pdf', `s3://${bucket}.s3.amazonaws.com/${pageKey}`],
      ['split-pdf', `s3://${bucket}//${pageKey}`],
    ] as const
    for (const [utility, url] of attempts) {
      const res = await api('POST', `/v1/utilities/${utility}/jobs`, { key: b.key, body: { input: { url } } })
      expect(res.status, url).toBe(404)
      expect(res.body.error.code, url).toBe('not_found')
      expect(JSON.stringify(res.body), url).not.toContain(jobA)
    }
    expect((await api('GET', '/v1/jobs', { key: b.key })).body.items).toEqual([])
    // The owner chains its own output: same URL, its key.
    const own = await api('POST', '/v1/utilities/split-pdf', { key: a.key, body: { input: { url: `s3://${bucket}/${pageKey}` } } })
    expect(own.status).toBe(200)
    expect(own.body.result.pageCount).toBe(1)
    expect((await download(own.body.result.files[0].url)).status).toBe(200)
  })
})

describe('idempotency when the first create is slow', () => {
  it('gives a retry that arrives long after the first request (still creating) the same job', async () => {
    const { key } = await createKey()
    const url = files.add('slow-create.pdf', await makePdf(1))
    const headers = { 'Idempotency-Key': `slow-${Date.now()}` }
    // Storage hangs: the first request is stuck writing its input, as a slow create would be.
    const minio = Number(readFileSync(join(inject('platformDir'), 'pids', 'minio.pid'), 'utf8'))
    process.kill(-minio, 'SIGSTOP')
    let first: Promise<{ status: number; headers: Headers; body: any }>
    let second: Promise<{ status: number; headers: Headers; body: any }>
    try {
      first = api('POST', '/v1/utilities/split-pdf/jobs', { key, headers, body: { input: { url } } })
      // Longer than the few seconds the old Redis claim lived.
      await new Promise((r) => setTimeout(r, 6000))
      second = api('POST', '/v1/utilities/split-pdf/jobs', { key, headers, body: { input: { url } } })
      await new Promise((r) => setTimeout(r, 1000))
    } finally {
      process.kill(-minio, 'SIGCONT')
    }
    const [a, b] = await Promise.all([first!, second!])
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    expect(b.body.id).toBe(a.body.id)
    expect([a.headers.get('idempotent-replayed'), b.headers.get('idempotent-replayed')].filter(Boolean)).toEqual(['true'])
    expect((await api('GET', '/v1/jobs', { key })).body.items.map((j: { id: string }) => j.id)).toEqual([a.body.id])
  })
})
