import http from 'node:http'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FILES_HOST_HEADERS, filesHostHandler, isPresignedRequest } from './files-host.js'

/** The query of a presigned link (storage checks the signature; the files host its presence). */
const SIGNED =
  'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=c&X-Amz-Date=d&X-Amz-SignedHeaders=host&X-Amz-Signature=s'
const PUBLIC = 'http://files.example.test:8082'

/** A stand-in storage that records what reached it and answers with headers of its own. */
const seen: Array<{ method?: string; url?: string; host?: string; range?: string; cookie?: string }> = []
const storage = http.createServer((req, res) => {
  seen.push({
    method: req.method,
    url: req.url,
    host: req.headers.host,
    range: req.headers.range,
    cookie: req.headers.cookie,
  })
  res.writeHead(200, {
    'content-type': 'text/html',
    'content-length': '5',
    server: 'storage',
    'x-amz-request-id': 'abc',
    'content-security-policy': 'none',
  })
  res.end(req.method === 'HEAD' ? undefined : 'hello')
})
let files: http.Server
let base = ''

beforeAll(async () => {
  await new Promise<void>((r) => storage.listen(0, '127.0.0.1', r))
  const s = `http://127.0.0.1:${(storage.address() as AddressInfo).port}`
  files = http.createServer(
    filesHostHandler({ storage: s, publicEndpoint: PUBLIC, bucket: 'dutil', log: pino({ level: 'silent' }) }),
  )
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`
})
afterAll(async () => {
  files.close()
  storage.close()
})

describe('the files host', () => {
  it("hands a download to storage with the signed Host (never the caller's), path, query and range, and nothing else", async () => {
    const res = await fetch(`${base}/dutil/a/b.html?${SIGNED}`, {
      headers: { range: 'bytes=0-1', cookie: 'session=1' },
    })
    expect(await res.text()).toBe('hello')
    expect(seen.at(-1)).toEqual({
      method: 'GET',
      url: `/dutil/a/b.html?${SIGNED}`,
      host: new URL(PUBLIC).host,
      range: 'bytes=0-1',
      cookie: undefined,
    })
    // A Host of the caller's choosing changes nothing.
    await new Promise<void>((resolve, reject) =>
      http
        .get(`${base}/dutil/a/b.html?${SIGNED}`, { headers: { host: 'evil.example' } }, (r) => {
          r.resume()
          r.on('end', resolve)
        })
        .on('error', reject),
    )
    expect(seen.at(-1)!.host).toBe(new URL(PUBLIC).host)
  })

  it("refuses with 404 in the envelope, before storage sees it, what is not a presigned download of the bucket's objects", async () => {
    const before = seen.length
    for (const path of [
      '/minio/health/live',
      `/minio/health/live?${SIGNED}`,
      '/dutil/a/b.html',
      `/dutil?${SIGNED}`,
      `/dutil/?${SIGNED}`,
      `/other-bucket/a?${SIGNED}`,
      `/dutil/a%2Fb?${SIGNED}`,
      `/dutil/a?${SIGNED}&X-Amz-Signature=t`,
    ]) {
      const res = await fetch(`${base}${path}`)
      expect(res.status, path).toBe(404)
      expect(await res.json()).toEqual({
        error: {
          code: 'not_found',
          message: 'The files host serves only download links of job results and upload links of direct uploads.',
        },
      })
      expect(res.headers.get('content-security-policy')).toBe(FILES_HOST_HEADERS['content-security-policy'])
    }
    expect(seen.length).toBe(before)
  })

  it('recognises presigned downloads (pure)', () => {
    expect(isPresignedRequest('HEAD', `/dutil/split-pdf/2026-11-26/job_x/page-001.pdf?${SIGNED}`, 'dutil')).toBe(true)
    expect(isPresignedRequest('GET', `/dutil/unzip-files/d/job/a%20b.txt?${SIGNED}`, 'dutil')).toBe(true)
    expect(isPresignedRequest('POST', `/dutil/x?${SIGNED}`, 'dutil')).toBe(false)
    expect(isPresignedRequest('GET', `/dutil/x/%ZZ?${SIGNED}`, 'dutil')).toBe(false)
    // Dot segments as a raw request line may carry them (fetch would resolve them first).
    expect(isPresignedRequest('GET', `/dutil/a/../../other/x?${SIGNED}`, 'dutil')).toBe(false)
    expect(isPresignedRequest('GET', `/dutil/a/%2e%2e/x?${SIGNED}`, 'dutil')).toBe(false)
    expect(isPresignedRequest('GET', `/dutil/a/./x?${SIGNED}`, 'dutil')).toBe(false)
  })

  it("takes a PUT only of an upload's object, presigned (a direct upload or one of its parts)", () => {
    const upload = '/dutil/uploads/7ZQK3M0D/2026-11-28/file_01JCZ8Y3E7XK2M9QW4T6R5S000/big%20one.pdf'
    expect(isPresignedRequest('PUT', `${upload}?${SIGNED}`, 'dutil')).toBe(true)
    // One stored before tenant codes.
    const uncoded = '/dutil/uploads/2026-11-28/file_01JCZ8Y3E7XK2M9QW4T6R5S000/big.pdf'
    expect(isPresignedRequest('PUT', `${uncoded}?${SIGNED}`, 'dutil')).toBe(true)
    expect(isPresignedRequest('PUT', `/dutil/uploads/7ZQK3M0D/x/2026-11-28/file_x/b.pdf?${SIGNED}`, 'dutil')).toBe(
      false,
    )
    expect(isPresignedRequest('PUT', `${upload}?partNumber=2&uploadId=abc&${SIGNED}`, 'dutil')).toBe(true)
    expect(isPresignedRequest('PUT', upload, 'dutil')).toBe(false)
    expect(isPresignedRequest('PUT', `/dutil/split-pdf/2026-11-26/job_x/page-001.pdf?${SIGNED}`, 'dutil')).toBe(false)
    expect(isPresignedRequest('PUT', `/dutil/uploads/x?${SIGNED}`, 'dutil')).toBe(false)
    expect(isPresignedRequest('PUT', `/dutil/uploads/2026-11-28/file_x/a/b.pdf?${SIGNED}`, 'dutil')).toBe(false)
    expect(isPresignedRequest('DELETE', `${upload}?${SIGNED}`, 'dutil')).toBe(false)
    expect(isPresignedRequest('POST', `${upload}?uploads&${SIGNED}`, 'dutil')).toBe(false)
  })

  it('answers with its own security headers in place of storage ones, and passes only download headers back', async () => {
    const res = await fetch(`${base}/dutil/x?${SIGNED}`)
    for (const [k, v] of Object.entries(FILES_HOST_HEADERS)) expect(res.headers.get(k), k).toBe(v)
    expect(res.headers.get('content-type')).toBe('text/html')
    expect(res.headers.get('server')).toBeNull()
    expect(res.headers.get('x-amz-request-id')).toBeNull()
  })

  it('refuses other verbs without asking storage, and answers 502 while storage is unreachable', async () => {
    const before = seen.length
    const put = await fetch(`${base}/dutil/x?${SIGNED}`, { method: 'PUT', body: 'x' })
    expect(put.status).toBe(404)
    expect(put.headers.get('content-security-policy')).toBe(FILES_HOST_HEADERS['content-security-policy'])
    expect(seen.length).toBe(before)
    const dead = http.createServer(
      filesHostHandler({
        storage: 'http://127.0.0.1:1',
        publicEndpoint: PUBLIC,
        bucket: 'dutil',
        log: pino({ level: 'silent' }),
      }),
    )
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r))
    const res = await fetch(`http://127.0.0.1:${(dead.address() as AddressInfo).port}/dutil/x?${SIGNED}`)
    expect(res.status).toBe(502)
    dead.close()
  })
})
