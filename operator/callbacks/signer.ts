import { createHmac } from 'node:crypto'

/**
 * Standard Webhooks signing (docs/api.md, Callbacks). The HMAC-SHA256 key is the
 * base64-decoded part of the `whsec_` secret; the signed content is `<id>.<timestamp>.<body>`
 * with the raw body exactly as sent.
 */
export const SECRET_PREFIX = 'whsec_'

export function signingKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
  const key = Buffer.from(encoded, 'base64')
  if (key.length === 0) throw new Error('the signing secret is empty')
  return key
}

/** `v1,<base64 HMAC-SHA256>` for one message. `timestampSeconds` is Unix seconds. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string | Buffer): string {
  const mac = createHmac('sha256', signingKey(secret))
  mac.update(`${id}.${timestampSeconds}.`)
  mac.update(body)
  return `v1,${mac.digest('base64')}`
}

/** The three `webhook-*` headers of one attempt. */
export function webhookHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string | Buffer,
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': sign(secret, id, timestampSeconds, body),
  }
}
