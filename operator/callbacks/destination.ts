import type { LookupAddress } from 'node:dns'
import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { addressAllowed, type AddressAllowance } from '../../contract/address-policy.js'
import { literalHost } from '../../contract/callback-url.js'

export type Resolver = (host: string) => Promise<LookupAddress[]>

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true })

/**
 * `allowLoopback`: `make dev`'s allowance (DUTIL_ALLOW_LOOPBACK_URLS); `allowedNetworks`: private
 * receivers an administrator named (DUTIL_ALLOWED_PRIVATE_NETWORKS).
 */
export interface DestinationOptions extends AddressAllowance {
  resolver?: Resolver
}

/**
 * `ok`: connect to exactly these (checked) addresses. `refused`: the destination is not
 * allowed and the callback fails at once. `unresolved`: DNS gave no answer; worth a retry.
 */
export type DestinationCheck =
  | { kind: 'ok'; url: URL; addresses: LookupAddress[] }
  | { kind: 'refused'; reason: string }
  | { kind: 'unresolved'; reason: string }

/**
 * The check made before every callback attempt (spec, Events: Allowed destinations): https
 * only, no credentials, and every address the host resolves to must be public (one private,
 * loopback, link-local, multicast or unique-local answer, IPv4-mapped forms included, refuses
 * the host). The caller then connects to a checked address, so a second DNS answer cannot
 * move the connection elsewhere.
 */
export async function checkDestination(raw: string, opts: DestinationOptions): Promise<DestinationCheck> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { kind: 'refused', reason: 'The callback URL is not a valid URL.' }
  }
  if (url.protocol !== 'https:') return { kind: 'refused', reason: 'The callback URL must use https.' }
  if (url.username || url.password) return { kind: 'refused', reason: 'The callback URL must not contain credentials.' }
  const host = literalHost(url)
  let addresses: LookupAddress[]
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }]
  } else {
    try {
      addresses = await (opts.resolver ?? systemResolver)(host)
    } catch (err) {
      return { kind: 'unresolved', reason: `The host ${host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'}).` }
    }
    if (addresses.length === 0) return { kind: 'unresolved', reason: `The host ${host} could not be resolved.` }
  }
  const bad = addresses.find((a) => !addressAllowed(a.address, opts.allowLoopback, opts.allowedNetworks))
  if (bad) {
    return { kind: 'refused', reason: `The host ${host} resolves to ${bad.address}, which is not an allowed destination (private, loopback, link-local, multicast or unique-local).` }
  }
  return { kind: 'ok', url, addresses }
}
