import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorMiddleware } from '../error-middleware.js'
import { csrfCheck, originCheck, readCookie, setCookie } from './http.js'

let url = ''
let server: ReturnType<Koa['listen']>

beforeAll(async () => {
  const app = new Koa()
  app.proxy = true
  app.use(errorMiddleware(pino({ level: 'silent' })))
  app.use(originCheck('https://dutil.example.com'))
  app.use((ctx) => {
    if (ctx.path === '/cookie') {
      const insecure = ctx.query.insecure === 'true'
      setCookie(ctx, 'dutil_session', 'abc', { insecure, maxAgeMs: 60_000 })
      setCookie(ctx, 'dutil_pending', 'p', { insecure, path: '/console/api/session' })
      return void (ctx.body = { seen: readCookie(ctx, 'dutil_session', { insecure }) ?? null })
    }
    csrfCheck(ctx, { user: 'u', csrf: 'token-123', createdAt: 0, method: 'password' })
    ctx.body = { ok: true }
  })
  server = app.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise((r) => server.close(r)))

const post = (headers: Record<string, string>) => fetch(`${url}/x`, { method: 'POST', headers })

describe('console request checks', () => {
  it('refuses a POST from another origin even with the right token (Koa 3 ctx.origin echoes the header)', async () => {
    expect((await post({ Origin: 'https://evil.example', 'X-CSRF-Token': 'token-123' })).status).toBe(403)
    expect((await post({ 'Sec-Fetch-Site': 'cross-site', 'X-CSRF-Token': 'token-123' })).status).toBe(403)
  })

  it("accepts the configured origin and the gateway's own, with the token", async () => {
    expect((await post({ Origin: 'https://dutil.example.com', 'X-CSRF-Token': 'token-123' })).status).toBe(200)
    expect((await post({ Origin: url, 'X-CSRF-Token': 'token-123' })).status).toBe(200)
    expect((await post({ 'X-CSRF-Token': 'token-123' })).status).toBe(200)
  })

  it('refuses a missing or wrong CSRF token', async () => {
    expect((await post({ Origin: url })).status).toBe(403)
    expect((await post({ Origin: url, 'X-CSRF-Token': 'token-124' })).status).toBe(403)
  })

  it('over https names the session cookie __Host- (Secure, Path=/), path-scoped ones __Secure-, and reads only those back', async () => {
    const res = await fetch(`${url}/cookie`, {
      headers: { Cookie: 'other=1; dutil_session=planted; __Host-dutil_session=xyz' },
    })
    expect(res.headers.getSetCookie()).toEqual([
      '__Host-dutil_session=abc; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=60',
      '__Secure-dutil_pending=p; Path=/console/api/session; HttpOnly; SameSite=Lax; Secure',
    ])
    // A cookie without the prefix (which a plain-http page or a sibling domain could plant) is not the session.
    expect(await res.json()).toEqual({ seen: 'xyz' })
    expect(await (await fetch(`${url}/cookie`, { headers: { Cookie: 'dutil_session=planted' } })).json()).toEqual({
      seen: null,
    })
  })

  it('on plain-http dev keeps bare names scoped to /console', async () => {
    const res = await fetch(`${url}/cookie?insecure=true`, { headers: { Cookie: 'dutil_session=xyz' } })
    expect(res.headers.getSetCookie()[0]).toBe('dutil_session=abc; Path=/console; HttpOnly; SameSite=Lax; Max-Age=60')
    expect(await res.json()).toEqual({ seen: 'xyz' })
  })
})
