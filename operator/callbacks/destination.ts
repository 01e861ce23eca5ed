import type { LookupAddress } from 'node:dns'
import type { AddressAllowance } from '../../contract/address-policy.js'
import { literalHost } from '../../contract/callback-url.js'
import { type Resolver, resolveAllowedAddresses } from '../../platform/pinned-address.js'

export type { Resolver }

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
 * The check made before every callback attempt (docs/api.md, Callbacks): https
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
  const found = await resolveAllowedAddresses(host, opts, opts.resolver)
  if (found.kind === 'unresolved')
    return {
      kind: 'unresolved',
      reason: `The host ${host} could not be resolved${found.code ? ` (${found.code})` : ''}.`,
    }
  if (found.kind === 'refused') {
    return {
      kind: 'refused',
      reason: `The host ${host} resolves to ${found.address}, which is not an allowed destination (private, loopback, link-local, multicast or unique-local).`,
    }
  }
  return { kind: 'ok', url, addresses: found.addresses }
}
