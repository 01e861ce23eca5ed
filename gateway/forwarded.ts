import type { Context, Next } from 'koa'
import type { AllowedNetworks } from '../contract/address-policy.js'

/** The forwarding headers Koa reads when `app.proxy` is on: the client address, scheme and host. */
const FORWARDED_HEADERS = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'] as const

/**
 * The client's address as a chain of trusted proxies reports it: X-Forwarded-For read from the
 * right, past every hop inside `trusted`; the first hop outside them is the client (a forged
 * left part of the header is never reached). The peer itself when it is not trusted.
 */
export function clientAddress(
  peer: string,
  forwardedFor: string | undefined,
  trusted: AllowedNetworks | undefined,
): string {
  if (!trusted || !trusted.contains(peer)) return peer
  const hops = (forwardedFor ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean)
  let client = peer
  for (let i = hops.length - 1; i >= 0; i--) {
    client = hops[i]
    if (!trusted.contains(client)) break
  }
  return client
}

/**
 * First middleware: forwarding headers count only when the connection comes from a trusted proxy
 * (DUTIL_TRUSTED_PROXIES, the ingress controller's addresses). From anyone else they are removed,
 * so a client cannot choose the address the sign-in lockout and rate limits count it under.
 */
export function trustForwardedHeadersFrom(trusted: AllowedNetworks | undefined) {
  return async (ctx: Context, next: Next) => {
    const peer = ctx.req.socket.remoteAddress ?? ''
    if (!trusted || !trusted.contains(peer)) {
      for (const h of FORWARDED_HEADERS) delete ctx.req.headers[h]
      ctx.request.ip = peer
    } else {
      ctx.request.ip = clientAddress(peer, ctx.get('X-Forwarded-For') || undefined, trusted)
    }
    await next()
  }
}
