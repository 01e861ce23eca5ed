import { isIP } from 'node:net'
import { classifyAddress } from './address-policy.js'
import { MAX_CALLBACK_URL_LENGTH } from './request-schemas.js'

/**
 * The shape rules of a callback URL (docs/api.md, Callbacks), checked without any
 * network access: at submission by the gateway, and again by the operator before every attempt
 * (which then also resolves the host). Returns why the URL is refused, or null when its shape
 * is acceptable. A host written as an IP literal must be a public address; loopback literals
 * are refused here too (the dev allowance applies to resolved names such as `localhost`).
 */
export function callbackUrlProblem(raw: string): string | null {
  if (raw.length > MAX_CALLBACK_URL_LENGTH) return `must be at most ${MAX_CALLBACK_URL_LENGTH} characters`
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'must be a valid URL'
  }
  if (url.protocol !== 'https:') return 'must be an https:// URL'
  if (url.username || url.password) return 'must not contain credentials (user:pass@)'
  const host = literalHost(url)
  if (host === '') return 'must name a host'
  if (isIP(host) && classifyAddress(host) !== 'public') {
    return 'must not point at a private, loopback, link-local, multicast or unique-local address'
  }
  return null
}

/** The URL's host without IPv6 brackets (the WHATWG parser already turned 0x7f.1 and friends into dotted IPv4). */
export function literalHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '')
}
