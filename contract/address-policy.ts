import { BlockList, isIP } from 'node:net'

/**
 * Which network addresses dutil may connect to on a caller's behalf (input downloads and
 * callbacks). Public unicast only; loopback only when the dev allowance is on.
 */
const LOOPBACK = new BlockList()
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4')
LOOPBACK.addAddress('::1', 'ipv6')

const REFUSED = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['169.254.0.0', 16], // link-local, incl. 169.254.169.254 metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) REFUSED.addSubnet(net, bits, 'ipv4')
for (const [net, bits] of [
  ['::', 128],
  ['fc00::', 7], // unique-local, incl. fd00:ec2::254 metadata
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64 can reach private IPv4
  ['2002::', 16], // 6to4 embeds IPv4
] as const) REFUSED.addSubnet(net, bits, 'ipv6')

/** The IPv4 address embedded in an IPv4-mapped or -compatible IPv6 address, if any. */
export function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase()
  const dotted = /^::(ffff:(0:)?)?(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (dotted) return dotted[3]
  const hex = /^::(ffff:(0:)?)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower)
  if (hex) {
    const hi = parseInt(hex[3], 16)
    const lo = parseInt(hex[4], 16)
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  }
  return null
}

export type AddressVerdict = 'public' | 'loopback' | 'refused'

export function classifyAddress(address: string): AddressVerdict {
  const family = isIP(address)
  if (family === 0) return 'refused'
  if (family === 6) {
    const v4 = embeddedIpv4(address)
    if (v4) return classifyAddress(v4)
  }
  const type = family === 4 ? 'ipv4' : 'ipv6'
  if (LOOPBACK.check(address, type)) return 'loopback'
  if (REFUSED.check(address, type)) return 'refused'
  return 'public'
}

export function addressAllowed(address: string, allowLoopback: boolean): boolean {
  const verdict = classifyAddress(address)
  return verdict === 'public' || (verdict === 'loopback' && allowLoopback)
}
