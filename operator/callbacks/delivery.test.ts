import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CallbackReceiver } from '../../test/support/callback-receiver.js'
import { makeTestCa, type TestCa } from '../../test/support/test-ca.js'
import { deliverCallback, USER_AGENT, type DeliveryOptions } from './delivery.js'
import type { Resolver } from './destination.js'

const SECRET = `whsec_${Buffer.from('delivery unit test secret, 32 b.').toString('base64')}`
let ca: TestCa
let receiver: CallbackReceiver
let opts: DeliveryOptions

beforeAll(async () => {
  ca = makeTestCa()
  receiver = await new CallbackReceiver(ca).start()
  opts = { allowLoopback: true, timeoutMs: 2000, ca: ca.ca }
})
afterAll(async () => {
  await receiver.stop()
  ca.remove()
})

const message = (url: string) => ({
  url,
  id: 'job_01JTEST0000000000000000000',
  body: JSON.stringify({ type: 'job.succeeded', data: { n: 1 } }),
  secret: SECRET,
})

describe('deliverCallback', () => {
  it('POSTs the signed body; a 2xx is a delivery', async () => {
    const url = receiver.url('/ok', 204)
    expect(await deliverCallback(message(url), opts)).toEqual({ kind: 'delivered', statusCode: 204 })
    const [got] = receiver.requests('/ok')
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': 'job_01JTEST0000000000000000000',
    })
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5)
    expect(new Webhook(SECRET).verify(got.body, got.headers)).toEqual({ type: 'job.succeeded', data: { n: 1 } })
  })

  it("sends the attempt's trace context, which cannot replace a signed header", async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    const msg = { ...message(receiver.url('/traced', 204)), traceHeaders: { traceparent, 'webhook-id': 'forged' } }
    expect(await deliverCallback(msg, opts)).toEqual({ kind: 'delivered', statusCode: 204 })
    const [got] = receiver.requests('/traced')
    expect(got.headers.traceparent).toBe(traceparent)
    expect(got.headers['webhook-id']).toBe('job_01JTEST0000000000000000000')
  })

  it('counts a 500 as a failure with its status', async () => {
    expect(await deliverCallback(message(receiver.url('/err', 500)), opts)).toMatchObject({
      kind: 'failed',
      statusCode: 500,
    })
  })

  it('never follows a redirect: a 3xx is a failure', async () => {
    expect(await deliverCallback(message(receiver.url('/moved', 302)), opts)).toMatchObject({
      kind: 'failed',
      statusCode: 302,
      error: expect.stringContaining('redirects are not followed'),
    })
    expect(receiver.requests('/redirected/moved')).toHaveLength(0)
  })

  it('gives up on a receiver that does not answer in time', async () => {
    const started = Date.now()
    const outcome = await deliverCallback(message(receiver.url('/stall', 'stall')), { ...opts, timeoutMs: 300 })
    expect(outcome).toMatchObject({
      kind: 'failed',
      statusCode: null,
      error: expect.stringContaining('did not answer'),
    })
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('refuses a link-local literal before any connection, even with the loopback allowance', async () => {
    const resolver: Resolver = async () => {
      throw new Error('must not resolve')
    }
    expect(
      await deliverCallback(message('https://169.254.169.254/latest/meta-data/'), { ...opts, resolver }),
    ).toMatchObject({ kind: 'refused' })
  })

  it('refuses loopback without the dev allowance', async () => {
    expect(await deliverCallback(message(receiver.url('/strict')), { ...opts, allowLoopback: false })).toMatchObject({
      kind: 'refused',
    })
    expect(receiver.requests('/strict')).toHaveLength(0)
  })

  it('connects to the checked address, not to a second lookup of the name', async () => {
    // The receiver listens on 127.0.0.1 only; the check's answer (127.0.0.2) is where the connection goes.
    const resolver: Resolver = async () => [{ address: '127.0.0.2', family: 4 }]
    expect(await deliverCallback(message(receiver.url('/pinned')), { ...opts, resolver })).toMatchObject({
      kind: 'failed',
      error: expect.stringContaining('ECONNREFUSED'),
    })
    expect(receiver.requests('/pinned')).toHaveLength(0)
  })

  it('verifies the receiver certificate', async () => {
    expect(await deliverCallback(message(receiver.url('/untrusted')), { ...opts, ca: undefined })).toMatchObject({
      kind: 'failed',
      statusCode: null,
    })
    expect(receiver.requests('/untrusted')).toHaveLength(0)
  })
})
