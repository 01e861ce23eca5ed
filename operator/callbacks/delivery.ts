import type { LookupAddress } from 'node:dns'
import https from 'node:https'
import type { SecureContextOptions } from 'node:tls'
import type { AttemptOutcome } from './callback-state.js'
import { checkDestination, type DestinationOptions } from './destination.js'
import { webhookHeaders } from './signer.js'
import { pinnedLookup } from '../../platform/pinned-address.js'

export const USER_AGENT = 'dutil-webhooks/1.0 (Standard Webhooks sender)'

/** One signed callback attempt: `id` is the job id (the same on every retry); `body` is sent byte for byte. */
export interface CallbackMessage {
  url: string
  id: string
  body: string
  secret: string
  /** The attempt's W3C trace context headers, so a receiver with tracing continues the job's trace. */
  traceHeaders?: Record<string, string>
}

export interface DeliveryOptions extends DestinationOptions {
  /** The receiver must answer within this long (docs/api.md: 10 s). */
  timeoutMs: number
  /** Extra trust for the receiver's certificate (tests); the system store (and NODE_EXTRA_CA_CERTS) otherwise. */
  ca?: SecureContextOptions['ca']
  now?: () => number
}

/**
 * Makes one attempt: checks the destination again (DNS included), signs with a timestamp taken
 * now, POSTs to a checked address and classifies the answer. Any 2xx within the timeout is a
 * delivery; a 3xx (never followed), any other status, a timeout or a connection error is a
 * failure worth a retry; a refused destination fails without retries.
 */
export async function deliverCallback(msg: CallbackMessage, opts: DeliveryOptions): Promise<AttemptOutcome> {
  const dest = await checkDestination(msg.url, opts)
  if (dest.kind === 'refused') return { kind: 'refused', error: dest.reason }
  if (dest.kind === 'unresolved')
    return { kind: 'failed', statusCode: null, error: dest.reason, errorClass: 'unresolved' }
  const timestamp = Math.floor((opts.now ? opts.now() : Date.now()) / 1000)
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    ...msg.traceHeaders,
    ...webhookHeaders(msg.secret, msg.id, timestamp, msg.body),
  }
  const answer = await postPinned(dest.url, dest.addresses, headers, msg.body, opts)
  if ('error' in answer) return { kind: 'failed', statusCode: null, error: answer.error, errorClass: answer.errorClass }
  const status = answer.statusCode
  if (status >= 200 && status < 300) return { kind: 'delivered', statusCode: status }
  if (status >= 300 && status < 400)
    return {
      kind: 'failed',
      statusCode: status,
      error: `The receiver answered ${status}; redirects are not followed.`,
      errorClass: 'http_status',
    }
  return { kind: 'failed', statusCode: status, error: `The receiver answered ${status}.`, errorClass: 'http_status' }
}

type Answer = { statusCode: number } | { error: string; errorClass: 'timeout' | 'connection' }

/** POST to `url`, connecting only to `addresses`; TLS still verifies the certificate against the URL's host. */
function postPinned(
  url: URL,
  addresses: LookupAddress[],
  headers: Record<string, string>,
  body: string,
  opts: DeliveryOptions,
): Promise<Answer> {
  const payload = Buffer.from(body)
  return new Promise((resolve) => {
    let settled = false
    const settle = (a: Answer) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(a)
    }
    const req = https.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(payload.length) },
      agent: false,
      ca: opts.ca,
      lookup: pinnedLookup(addresses),
    })
    const timer = setTimeout(() => {
      settle({
        error: `The receiver did not answer within ${Math.round(opts.timeoutMs / 1000)} s.`,
        errorClass: 'timeout',
      })
      req.destroy()
    }, opts.timeoutMs)
    req.on('response', (res) => {
      settle({ statusCode: res.statusCode ?? 0 })
      // The answer's body is not needed; do not let a slow one hold the connection.
      res.destroy()
    })
    req.on('error', (err: NodeJS.ErrnoException) =>
      settle({ error: `The connection failed: ${err.code ?? err.message}.`, errorClass: 'connection' }),
    )
    req.end(payload)
  })
}
