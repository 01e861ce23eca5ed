import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { sign, signingKey, webhookHeaders } from './signer.js'

// The published Standard Webhooks test vector.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
}

describe('signer', () => {
  it('matches the Standard Webhooks test vector', () => {
    expect(sign(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature)
  })

  it('keys the HMAC with the base64-decoded part after whsec_', () => {
    expect(signingKey(VECTOR.secret)).toEqual(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'))
    expect(() => signingKey('whsec_')).toThrow(/empty/)
  })

  it('signs headers that the official library verifies', () => {
    const secret = `whsec_${Buffer.from('a test secret of 32 bytes length').toString('base64')}`
    const body = JSON.stringify({
      type: 'job.succeeded',
      timestamp: '2026-01-01T00:00:00.000Z',
      data: { id: 'job_1', ünïcode: '✓' },
    })
    const now = Math.floor(Date.now() / 1000)
    const headers = webhookHeaders(secret, 'job_01J0000000000000000000000', now, body)
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ type: 'job.succeeded' })
    expect(() => new Webhook(secret).verify(body + ' ', headers)).toThrow()
    expect(() =>
      new Webhook(`whsec_${Buffer.from('another secret').toString('base64')}`).verify(body, headers),
    ).toThrow()
  })
})
