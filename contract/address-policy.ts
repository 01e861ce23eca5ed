import { BlockList, isIP } from 'node:net'

/**
 * Which network addresses dutil may connect to on a caller's behalf (input downloads, every
 * subresource Chromium loads, callbacks). Public unicast only; loopback only when the dev
 * allowance is on. IPv6 forms that embed an IPv4 address are judged by that address.
 */
const LOOPBACK = new BlockList()
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4')
LOOPBACK.addAddress('::1', 'ipv6')

/**
 * Every range refused besides loopback, as data: the runner's address policy checks against it,
 * and the chart's runner NetworkPolicy must except each of these (and loopback); a chart test
 * holds the two together.
 */
export const REFUSED_RANGES = {
  ipv4: [
    ['0.0.0.0', 8], // "this network"
    ['10.0.0.0', 8],
    ['100.64.0.0', 10], // carrier-grade NAT
    ['169.254.0.0', 16], // link-local, incl. 169.254.169.254 metadata
    ['172.16.0.0', 12],
    ['192.0.0.0', 24], // IETF protocol assignments
    ['192.0.2.0', 24], // documentation
    ['192.88.99.0', 24], // 6to4 relay anycast
    ['192.168.0.0', 16],
    ['198.18.0.0', 15], // benchmarking
    ['198.51.100.0', 24], // documentation
    ['203.0.113.0', 24], // documentation
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved and broadcast
  ],
  ipv6: [
    ['::', 128], // unspecified
    ['100::', 64], // discard-only
    ['2001::', 32], // Teredo tunnels to (obfuscated) IPv4
    ['2001:db8::', 32], // documentation
    ['fc00::', 7], // unique-local, incl. fd00:ec2::254 metadata
    ['fe80::', 10], // link-local
    ['fec0::', 10], // deprecated site-local
    ['ff00::', 8], // multicast
    ['64:ff9b::', 96], // NAT64 can reach private IPv4
    ['64:ff9b:1::', 48], // local-use NAT64
    ['2002::', 16], // 6to4 embeds IPv4
  ],
} as const satisfies Record<'ipv4' | 'ipv6', ReadonlyArray<readonly [string, number]>>

export const LOOPBACK_RANGES = { ipv4: [['127.0.0.0', 8]], ipv6: [['::1', 128]] } as const

const REFUSED = new BlockList()
for (const [net, bits] of REFUSED_RANGES.ipv4) REFUSED.addSubnet(net, bits, 'ipv4')
// IPv4-mapped addresses (::ffff:a.b.c.d) are judged by their IPv4 address before this list is
// consulted; on the wire they are IPv4 packets, which the NetworkPolicy's IPv4 excepts cover
// (Kubernetes refuses IPv4-mapped CIDRs in an ipBlock).
for (const [net, bits] of REFUSED_RANGES.ipv6) REFUSED.addSubnet(net, bits, 'ipv6')

/** An IPv6 address in its one canonical spelling (RFC 5952 as WHATWG URLs print it), or null. */
export function canonicalIpv6(address: string): string | null {
  if (isIP(address) !== 6) return null
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1)
  } catch {
    return null
  }
}

/**
 * The IPv4 address embedded in an IPv4-mapped (::ffff:a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d) or IPv4-compatible (::a.b.c.d) IPv6 address, in any spelling; else null.
 */
export function embeddedIpv4(address: string): string | null {
  const canonical = canonicalIpv6(address)
  if (!canonical) return null
  const hex = /^::(ffff:(0:)?)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical)
  if (!hex) return null
  const hi = parseInt(hex[3], 16)
  const lo = parseInt(hex[4], 16)
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

/**
 * Which non-public addresses a program may reach: loopback under the dev allowance, and named
 * private networks; and which otherwise public addresses it may not: the cluster's own pod and
 * Service ranges (`clusterNetworks`: on a cluster whose pods have global IPv6 addresses, a
 * runner could reach any pod by them).
 */
export interface AddressAllowance {
  allowLoopback: boolean
  allowedNetworks?: AllowedNetworks
  clusterNetworks?: AllowedNetworks
}

export type AddressVerdict = 'public' | 'loopback' | 'refused'

export function classifyAddress(address: string): AddressVerdict {
  const family = isIP(address)
  if (family === 0) return 'refused'
  if (family === 6) {
    const v4 = embeddedIpv4(address)
    if (v4) return classifyAddress(v4)
    address = canonicalIpv6(address)!
  }
  const type = family === 4 ? 'ipv4' : 'ipv6'
  if (LOOPBACK.check(address, type)) return 'loopback'
  if (REFUSED.check(address, type)) return 'refused'
  return 'public'
}

/**
 * Allows an address when it is public and outside the cluster's own networks, loopback under
 * the dev allowance, or inside a network an administrator named (`allowedNetworks`, see
 * {@link parseAllowedNetworks}: a named network wins over the cluster's ranges too).
 */
export function addressAllowed(
  address: string,
  allowLoopback: boolean,
  allowedNetworks?: AllowedNetworks,
  clusterNetworks?: AllowedNetworks,
): boolean {
  if (allowedNetworks?.contains(address)) return true
  const verdict = classifyAddress(address)
  if (verdict === 'public') return !clusterNetworks?.contains(address)
  return verdict === 'loopback' && allowLoopback
}

/**
 * Private networks an installation lets dutil reach on a caller's behalf: input URLs, the
 * pages Chromium loads, callbacks (DUTIL_ALLOWED_PRIVATE_NETWORKS; the chart's
 * `allowedPrivateNetworks`, which also opens them in the runner NetworkPolicy). The API refuses
 * every private address; this is an administrator's deliberate exception for an in-cluster
 * document store or webhook receiver, empty by default (docs/adr/0015-allowed-private-networks.md).
 */
export class AllowedNetworks {
  private readonly list = new BlockList()
  readonly cidrs: readonly string[]

  private constructor(cidrs: string[]) {
    this.cidrs = cidrs
    for (const cidr of cidrs) {
      const [net, bits] = cidr.split('/')
      const family = isIP(net)
      this.list.addSubnet(family === 6 ? canonicalIpv6(net)! : net, Number(bits), family === 6 ? 'ipv6' : 'ipv4')
    }
  }

  /** Whether the address (IPv4-mapped forms judged by their IPv4 address) is in one of the networks. */
  contains(address: string): boolean {
    const family = isIP(address)
    if (family === 0) return false
    if (family === 6) {
      const v4 = embeddedIpv4(address)
      if (v4) return this.list.check(v4, 'ipv4')
      return this.list.check(canonicalIpv6(address)!, 'ipv6')
    }
    return this.list.check(address, 'ipv4')
  }

  /**
   * Parses a comma-separated CIDR list once at start; an empty or missing list allows nothing
   * (undefined). Throws with the entry that is not a CIDR, so a typo stops the program at start
   * instead of silently allowing nothing.
   */
  static parse(list: string | undefined): AllowedNetworks | undefined {
    const cidrs = (list ?? '')
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean)
    if (cidrs.length === 0) return undefined
    for (const cidr of cidrs) {
      const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr)
      const family = m ? isIP(m[1]) : 0
      if (!m || family === 0 || Number(m[2]) > (family === 4 ? 32 : 128))
        throw new Error(`${JSON.stringify(cidr)} is not a CIDR (like 10.20.0.0/16 or fd00::/64)`)
    }
    return new AllowedNetworks(cidrs)
  }
}

/** The host exactly as written in a URL, before any normalisation; null when there is none. */
function rawHost(raw: string): string | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]/?#]*\]|[^:/?#]*)/i.exec(raw)
  return m ? m[1] : null
}

/**
 * Why an outbound URL is refused by its shape alone (before any DNS), or null. Only http(s);
 * no credentials; no backslashes (`\\host` paths, `http:\\host`); no control characters or
 * spaces; and an IP-address host must be written the one ordinary way: decimal
 * (`http://2130706433`), octal (`0177.0.0.1`), hex (`0x7f.1`), short (`127.1`),
 * percent-encoded or full-width spellings are refused even when they name a public address.
 */
export function urlShapeProblem(raw: string): string | null {
  if (/[\u0000-\u0020\u007f]/.test(raw)) return 'URLs with spaces or control characters are refused.'
  if (raw.includes('\\')) return 'URLs with backslashes are refused.'
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'The URL is not a valid URL.'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `Only http and https URLs can be fetched, not ${url.protocol}`
  if (url.username || url.password) return 'URLs with embedded credentials are refused.'
  const written = rawHost(raw)
  if (written === null) return 'The URL is not a valid URL.'
  if (isIP(url.hostname) === 4 && written !== url.hostname) {
    return `The host ${JSON.stringify(written.slice(0, 100))} is an unusual spelling of the address ${url.hostname}; write IP addresses in dotted decimal.`
  }
  return null
}
