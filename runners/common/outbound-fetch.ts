import http from 'node:http'
import https from 'node:https'
import { lookup as dnsLookup } from 'node:dns/promises'
import type { LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import type { Readable } from 'node:stream'
import { addressAllowed } from '../../contract/address-policy.js'
import { rejected } from './runner-error.js'

export type Resolver = (host: string) => Promise<LookupAddress[]>

export interface OutboundOptions {
  allowLoopback: boolean
  resolver?: Resolver
  maxRedirects?: number
  timeoutMs?: number
}

const defaultResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true })

/**
 * Checks a URL for an outbound fetch and picks the address to connect to. Every resolved
 * address must be allowed (one private answer refuses the host), and the connection then goes
 * to the checked address, so a second DNS answer cannot move it elsewhere.
 */
export async function checkOutboundUrl(raw: string, opts: OutboundOptions): Promise<{ url: URL; address: string; family: number }> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw rejected(`The URL ${JSON.stringify(raw.slice(0, 200))} is not a valid URL.`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw rejected(`Only http and https URLs can be fetched, not ${url.protocol}`)
  }
  if (url.username || url.password) throw rejected('URLs with embedded credentials are refused.')
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const addresses: LookupAddress[] = isIP(host)
    ? [{ address: host, family: isIP(host) }]
    : await (opts.resolver ?? defaultResolver)(host).catch(() => {
        throw rejected(`The host ${host} could not be resolved.`)
      })
  if (addresses.length === 0) throw rejected(`The host ${host} could not be resolved.`)
  for (const a of addresses) {
    if (!addressAllowed(a.address, opts.allowLoopback)) {
      throw rejected(`The host ${host} resolves to an address that is not allowed (private, loopback, link-local or reserved).`)
    }
  }
  return { url, address: addresses[0].address, family: addresses[0].family }
}

export interface FetchedBody {
  status: number
  headers: http.IncomingHttpHeaders
  body: Readable
  finalUrl: string
}

/**
 * GET with the address policy applied to the URL and to every redirect target. A non-2xx
 * answer is an `upstream_rejected` failure carrying the status.
 */
export async function outboundGet(raw: string, opts: OutboundOptions): Promise<FetchedBody> {
  const maxRedirects = opts.maxRedirects ?? 5
  let current = raw
  for (let hop = 0; hop <= maxRedirects; hop++) {
    const { url, address, family } = await checkOutboundUrl(current, opts)
    const res = await request(url, address, family, opts.timeoutMs ?? 60_000)
    const status = res.statusCode ?? 0
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume()
      current = new URL(res.headers.location, url).toString()
      continue
    }
    if (status < 200 || status >= 300) {
      res.resume()
      throw rejected(`Downloading ${describe(url)} failed: the server answered ${status}.`, status)
    }
    return { status, headers: res.headers, body: res, finalUrl: url.toString() }
  }
  throw rejected(`Downloading ${describe(new URL(raw))} failed: more than ${maxRedirects} redirects.`)
}

function describe(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`.slice(0, 300)
}

function request(url: URL, address: string, family: number, timeoutMs: number): Promise<http.IncomingMessage> {
  const mod = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    const req = mod.get(url, {
      // Connect to the address that was checked; TLS still verifies the URL's host name.
      lookup: (_host, options, cb) => {
        if ((options as { all?: boolean }).all) (cb as unknown as (e: null, a: LookupAddress[]) => void)(null, [{ address, family }])
        else cb(null, address, family)
      },
      headers: { 'user-agent': 'dutil-runner/1' },
      timeout: timeoutMs,
    })
    req.on('response', resolve)
    req.on('timeout', () => req.destroy(rejected(`Downloading ${describe(url)} timed out.`)))
    req.on('error', (err) => reject(err instanceof Error && err.name === 'RunnerError' ? err : rejected(`Downloading ${describe(url)} failed: ${err.message}`)))
  })
}
