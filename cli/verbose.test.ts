import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { verboseFetch } from './verbose.js'

describe('verbose fetch', () => {
  it('prints each request and its answer, never the API key', async () => {
    const server = http.createServer((_req, res) => res.writeHead(202, { 'x-request-id': 'req_123' }).end('{}'))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as AddressInfo).port
    const lines: string[] = []
    const f = verboseFetch((l) => lines.push(l))
    const res = await f(`http://127.0.0.1:${port}/v1/utilities/split-pdf?x=1`, {
      method: 'POST',
      headers: { authorization: 'Bearer du_live_secret' },
      body: '{}',
    })
    server.close()
    expect(res.status).toBe(202)
    expect(lines[0]).toBe(`> POST http://127.0.0.1:${port}/v1/utilities/split-pdf?x=1\n`)
    expect(lines[1]).toMatch(/^< 202 Accepted \(\d+ ms\) x-request-id: req_123\n$/)
    expect(lines.join('')).not.toContain('du_live_secret')
  })

  it('says when nothing answered, and still throws', async () => {
    const lines: string[] = []
    const server = http.createServer()
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as AddressInfo).port
    server.close()
    await expect(verboseFetch((l) => lines.push(l))(`http://127.0.0.1:${port}/v1/jobs`)).rejects.toThrow()
    expect(lines[1]).toMatch(/^< no answer \(\d+ ms\): fetch failed\n$/)
  })
})
