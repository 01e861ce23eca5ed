import http from 'node:http'
import https from 'node:https'
import type { Readable } from 'node:stream'
import { urlShapeProblem, type AddressAllowance } from '../../contract/address-policy.js'
import { pinnedLookup, type Resolver, resolveAllowedAddresses } from '../../platform/pinned-address.js'
import { rejected, RunnerError, UrlRefusedError } from './runner-error.js'

export type { Resolver }

export interface OutboundOptions extends AddressAllowance {
  /** Name resolution; tests inject one so that no real lookup (or connection) happens. */
  resolver?: Resolver
  maxRedirects?: number
  /** Socket inactivity limit, connect to last byte (default 60 s). */
  timeoutMs?: number
  /** Extra request headers (e.g. Chromium's Accept for a subresource). */
  headers?: Record<string, string>
}

export interface CheckedUrl {
  url: URL
  /** The address that was checked; the connection goes there and nowhere else. */
  address: string
  family: number
}

/** `scheme://host/path` of a URL for messages: no query (it may carry tokens), at most 300 chars. */
export function describeUrl(raw: string | URL): string {
  try {
    const url = typeof raw === 'string' ? new URL(raw) : raw
    return `${url.protocol}//${url.host}${url.pathname}`.slice(0, 300)
  } catch {
    return JSON.stringify(String(raw).slice(0, 100))
  }
}

/**
 * Checks a URL for an outbound fetch and picks the address to connect to. The URL's shape
 * must pass {@link urlShapeProblem}; every resolved address must be allowed (one private answer
 * refuses the host); the connection then goes to the checked address, so a second DNS answer
 * cannot move it elsewhere (no rebinding window).
 */
export async function checkOutboundUrl(raw: string, opts: OutboundOptions): Promise<CheckedUrl> {
  const shape = urlShapeProblem(raw)
  if (shape) throw new UrlRefusedError(shape)
  const url = new URL(raw)
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const found = await resolveAllowedAddresses(host, opts, opts.resolver)
  if (found.kind === 'unresolved') throw rejected(`The host ${host} could not be resolved.`)
  if (found.kind === 'refused')
    throw new UrlRefusedError(
      `The host ${host} resolves to an address that is not allowed (private, loopback, link-local or reserved).`,
    )
  return { url, address: found.addresses[0].address, family: found.addresses[0].family }
}

/**
 * The absolute URL a redirect points at. An absolute Location is checked as written (so a
 * redirect cannot smuggle a decimal or backslash spelling past the shape rules); a relative
 * one is resolved against the URL that answered.
 */
export function redirectTarget(location: string, base: URL): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(location)) return location
  if (location.startsWith('//')) return `${base.protocol}${location}`
  if (location.includes('\\')) return location // refused by the shape check, with its own message
  return new URL(location, base).toString()
}

export interface FetchedBody {
  status: number
  headers: http.IncomingHttpHeaders
  body: Readable
  finalUrl: string
}

export interface OneHop {
  status: number
  headers: http.IncomingHttpHeaders
  body: Readable
  url: URL
}

/** One request to a checked address, no redirect handling: what Chromium's interceptor needs. */
export async function outboundRequest(raw: string, opts: OutboundOptions): Promise<OneHop> {
  const { url, address, family } = await checkOutboundUrl(raw, opts)
  const res = await request(url, address, family, opts)
  return { status: res.statusCode ?? 0, headers: res.headers, body: res, url }
}

/**
 * GET with the address policy applied to the URL and to every redirect target. A non-2xx
 * answer is an `upstream_rejected` failure carrying the status.
 */
export async function outboundGet(raw: string, opts: OutboundOptions): Promise<FetchedBody> {
  const maxRedirects = opts.maxRedirects ?? 5
  let current = raw
  for (let hop = 0; hop <= maxRedirects; hop++) {
    let res: OneHop
    try {
      res = await outboundRequest(current, opts)
    } catch (err) {
      if (hop > 0 && err instanceof UrlRefusedError)
        throw new UrlRefusedError(
          `Downloading ${describeUrl(raw)} failed: it redirects to a URL that is refused. ${err.message}`,
        )
      throw err
    }
    const { status, headers, body, url } = res
    if (status >= 300 && status < 400 && headers.location) {
      body.resume()
      current = redirectTarget(headers.location, url)
      continue
    }
    if (status < 200 || status >= 300) {
      body.resume()
      throw rejected(`Downloading ${describeUrl(url)} failed: the server answered ${status}.`, status)
    }
    return { status, headers, body, finalUrl: url.toString() }
  }
  throw rejected(`Downloading ${describeUrl(raw)} failed: more than ${maxRedirects} redirects.`)
}

// Kept-alive sockets are reused only for the same host and port, and every one of them was
// opened to an address this policy checked.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 8 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 8 }),
}

function request(url: URL, address: string, family: number, opts: OutboundOptions): Promise<http.IncomingMessage> {
  const mod = url.protocol === 'https:' ? https : http
  const timeoutMs = opts.timeoutMs ?? 60_000
  return new Promise((resolve, reject) => {
    const req = mod.get(url, {
      agent: agents[url.protocol as 'http:' | 'https:'],
      // Connect to the address that was checked; TLS still verifies the URL's host name.
      lookup: pinnedLookup([{ address, family }]),
      headers: { 'user-agent': 'dutil-runner/1', ...(opts.headers ?? {}) },
      timeout: timeoutMs,
    })
    req.on('response', resolve)
    req.on('timeout', () =>
      req.destroy(
        rejected(`Downloading ${describeUrl(url)} timed out (no data for ${Math.round(timeoutMs / 1000)} s).`),
      ),
    )
    req.on('error', (err) =>
      reject(err instanceof RunnerError ? err : rejected(`Downloading ${describeUrl(url)} failed: ${err.message}`)),
    )
  })
}
