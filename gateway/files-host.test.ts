import http from 'node:http'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FILES_HOST_HEADERS, filesHostHandler } from './files-host.js'

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
  files = http.createServer(filesHostHandler({ storage: s, log: pino({ level: 'silent' }) }))
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`
})
afterAll(async () => {
  files.close()
  storage.close()
})

describe('the files host', () => {
  it('hands a download to storage with its own Host, path, query and range, and nothing else of the request', async () => {
    const res = await fetch(`${base}/dutil/a/b.html?X-Amz-Signature=s`, {
      headers: { range: 'bytes=0-1', cookie: 'session=1' },
    })
    expect(await res.text()).toBe('hello')
    expect(seen.at(-1)).toEqual({
      method: 'GET',
      url: '/dutil/a/b.html?X-Amz-Signature=s',
      host: new URL(base).host,
      range: 'bytes=0-1',
      cookie: undefined,
    })
  })

  it('answers with its own security headers in place of storage ones, and passes only download headers back', async () => {
    const res = await fetch(`${base}/dutil/x`)
    for (const [k, v] of Object.entries(FILES_HOST_HEADERS)) expect(res.headers.get(k), k).toBe(v)
    expect(res.headers.get('content-type')).toBe('text/html')
    expect(res.headers.get('server')).toBeNull()
    expect(res.headers.get('x-amz-request-id')).toBeNull()
  })

  it('refuses other verbs without asking storage, and answers 502 while storage is unreachable', async () => {
    const before = seen.length
    const put = await fetch(`${base}/dutil/x`, { method: 'PUT', body: 'x' })
    expect(put.status).toBe(405)
    expect(put.headers.get('content-security-policy')).toBe(FILES_HOST_HEADERS['content-security-policy'])
    expect(seen.length).toBe(before)
    const dead = http.createServer(filesHostHandler({ storage: 'http://127.0.0.1:1', log: pino({ level: 'silent' }) }))
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r))
    const res = await fetch(`http://127.0.0.1:${(dead.address() as AddressInfo).port}/dutil/x`)
    expect(res.status).toBe(502)
    dead.close()
  })
})
