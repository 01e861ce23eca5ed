import http from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { ApiError } from './api-error.js'
import { errorMiddleware } from './error-middleware.js'
import { readJsonBody } from './json-body.js'
import { requestId } from './request-id.js'

/** A gateway of one route that fails as `fail` does; its log lines and its address. */
async function failingApp(fail: () => never, plain = false) {
  const lines: Array<Record<string, unknown>> = []
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) })
  const app = new Koa()
  app.use(requestId)
  app.use(
    errorMiddleware(
      log,
      () => '/x',
      () => plain,
    ),
  )
  app.use(() => fail())
  const server = app.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  servers.push(server)
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, lines }
}

const servers: Array<ReturnType<Koa['listen']>> = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

describe('errorMiddleware', () => {
  it('answers an unexpected error 500 internal with the request id its log line holds, and no cause', async () => {
    const { url, lines } = await failingApp(() => {
      throw new Error('connect ECONNREFUSED 10.0.0.9:9000')
    })
    const res = await fetch(url)
    const body = (await res.json()) as { error: Record<string, unknown> }
    expect(res.status).toBe(500)
    expect(body).toEqual({
      error: { code: 'internal', message: 'An unexpected error occurred.', requestId: res.headers.get('x-request-id') },
    })
    const line = lines.find((l) => l.msg === 'unexpected error')
    expect(line).toMatchObject({ requestId: body.error.requestId, route: '/x' })
    expect(JSON.stringify(line)).toContain('ECONNREFUSED')
  })

  it("answers an ApiError with its status, headers and details; a 5xx's cause is logged, never answered", async () => {
    const { url, lines } = await failingApp(() => {
      throw new ApiError('internal', 'Storage could not take it.', undefined, { 'Retry-After': '2' }, new Error('down'))
    })
    const res = await fetch(url)
    expect(res.status).toBe(500)
    expect(res.headers.get('retry-after')).toBe('2')
    const body = (await res.json()) as { error: Record<string, unknown> }
    expect(body.error).toEqual({
      code: 'internal',
      message: 'Storage could not take it.',
      requestId: res.headers.get('x-request-id'),
    })
    expect(lines.find((l) => l.msg === 'request failed')).toMatchObject({
      requestId: body.error.requestId,
      cause: 'down',
    })
  })

  it('answers in plain text where the route is a Gotenberg one, the request id on a 5xx', async () => {
    const { url } = await failingApp(() => {
      throw new Error('boom')
    }, true)
    const res = await fetch(url)
    expect(res.status).toBe(500)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/)
    expect(await res.text()).toBe(
      `internal: An unexpected error occurred.\nrequest id: ${res.headers.get('x-request-id')}\n`,
    )
  })
})

describe('errorMiddleware and a client that leaves', () => {
  it('logs a request whose client hung up mid-body as the client leaving, never as an unexpected error', async () => {
    const lines: Array<Record<string, unknown>> = []
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) })
    const app = new Koa()
    app.use(requestId)
    app.use(errorMiddleware(log, () => '/x'))
    app.use(async (ctx) => {
      ctx.body = await readJsonBody(ctx)
    })
    const server = app.listen(0, '127.0.0.1')
    servers.push(server)
    await new Promise((r) => server.once('listening', r))
    const client = http.request({
      port: (server.address() as AddressInfo).port,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '1000' },
    })
    client.on('error', () => {})
    client.write('{"input": {')
    await new Promise((r) => setTimeout(r, 100))
    client.destroy()
    await expect.poll(() => lines.find((l) => l.msg === 'client left before its request arrived')).toBeDefined()
    expect(lines.find((l) => l.msg === 'client left before its request arrived')).toMatchObject({
      level: 30,
      route: '/x',
    })
    expect(lines.some((l) => l.msg === 'unexpected error')).toBe(false)
  })
})
