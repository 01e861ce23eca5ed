import type { LookupAddress, LookupOptions } from 'node:dns'
import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { addressAllowed, type AddressAllowance } from '../contract/address-policy.js'

/**
 * DNS pinning for every request dutil makes to a caller's URL — a runner fetching an input, the
 * operator delivering a callback: resolve once, check every answer against the address policy,
 * then connect only to a checked address, so a second DNS answer cannot move the connection
 * elsewhere (no rebinding window). Each caller words its own refusals.
 */
export type Resolver = (host: string) => Promise<LookupAddress[]>

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true })

export type HostAddresses =
  /** Every address the host resolves to is allowed: connect to these. */
  | { kind: 'ok'; addresses: LookupAddress[] }
  /** One answer is not allowed (one private answer refuses the host). */
  | { kind: 'refused'; address: string }
  /** DNS gave no answer (`code`: the resolver's error code, if it failed). */
  | { kind: 'unresolved'; code?: string }

/** The addresses of `host` (an IP literal is its own), checked against the policy. */
export async function resolveAllowedAddresses(
  host: string,
  policy: AddressAllowance,
  resolver: Resolver = systemResolver,
): Promise<HostAddresses> {
  let addresses: LookupAddress[]
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }]
  } else {
    try {
      addresses = await resolver(host)
    } catch (err) {
      return { kind: 'unresolved', code: (err as NodeJS.ErrnoException)?.code ?? 'error' }
    }
    if (addresses.length === 0) return { kind: 'unresolved' }
  }
  const bad = addresses.find(
    (a) => !addressAllowed(a.address, policy.allowLoopback, policy.allowedNetworks, policy.clusterNetworks),
  )
  return bad ? { kind: 'refused', address: bad.address } : { kind: 'ok', addresses }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * The `lookup` option of an http(s) request that answers with the checked addresses whatever
 * it is asked; TLS still verifies the certificate against the URL's host name.
 */
export function pinnedLookup(
  addresses: LookupAddress[],
): (host: string, options: LookupOptions, cb: LookupCallback) => void {
  if (addresses.length === 0) throw new Error('pinnedLookup needs at least one checked address')
  return (_host, options, cb) => {
    if (options.all) cb(null, addresses)
    else cb(null, addresses[0].address, addresses[0].family)
  }
}
