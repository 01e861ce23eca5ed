import { isIP } from 'node:net'

/** IPv4 literals and IPv6-looking runs (checked with isIP before they are replaced). */
const CANDIDATE = /\b(?:\d{1,3}\.){3}\d{1,3}\b|(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?:%\w+)?/gi

/**
 * Delivery errors name the address a callback host resolved to ("resolves to 10.0.3.7"): useful
 * to an admin, a map of the cluster's network to anyone else. For other people every IP address
 * in such a text is replaced.
 */
export function withoutAddresses(text: string | null): string | null {
  if (text === null) return null
  return text.replace(CANDIDATE, (m) => (isIP(m.replace(/%\w+$/, '')) ? '(an address)' : m))
}
