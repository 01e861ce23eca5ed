import { describe, expect, it } from 'vitest'
import {
  addressAllowed,
  AllowedNetworks,
  canonicalIpv6,
  classifyAddress,
  embeddedIpv4,
  urlShapeProblem,
} from './address-policy.js'

describe('classifyAddress', () => {
  it.each([
    ['10.1.2.3', 'refused'],
    ['172.16.0.1', 'refused'],
    ['172.31.255.255', 'refused'],
    ['192.168.1.1', 'refused'],
    ['100.64.0.1', 'refused'],
    ['169.254.169.254', 'refused'],
    ['224.0.0.1', 'refused'],
    ['239.255.255.250', 'refused'],
    ['255.255.255.255', 'refused'],
    ['0.0.0.0', 'refused'],
    ['fd00:ec2::254', 'refused'],
    ['FD00:EC2:0:0:0:0:0:254', 'refused'],
    ['fc00::1', 'refused'],
    ['fe80::1', 'refused'],
    ['ff02::1', 'refused'],
    ['::', 'refused'],
    ['::ffff:10.0.0.1', 'refused'],
    ['::ffff:a00:1', 'refused'],
    ['0:0:0:0:0:ffff:a00:1', 'refused'],
    ['0000:0000:0000:0000:0000:ffff:0a00:0001', 'refused'],
    ['::ffff:169.254.169.254', 'refused'],
    ['::ffff:a9fe:a9fe', 'refused'],
    ['::ffff:0:a9fe:a9fe', 'refused'],
    ['::169.254.169.254', 'refused'],
    ['::a00:1', 'refused'],
    ['64:ff9b::a9fe:a9fe', 'refused'],
    ['2002:a9fe:a9fe::', 'refused'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'refused'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['93.184.216.34', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['not-an-ip', 'refused'],
    ['', 'refused'],
  ])('%s is %s', (address, verdict) => {
    expect(classifyAddress(address)).toBe(verdict)
  })

  it('allows loopback only with the dev allowance', () => {
    expect(addressAllowed('127.0.0.1', false)).toBe(false)
    expect(addressAllowed('127.0.0.1', true)).toBe(true)
    expect(addressAllowed('::ffff:127.0.0.1', false)).toBe(false)
    expect(addressAllowed('10.0.0.1', true)).toBe(false)
    expect(addressAllowed('169.254.169.254', true)).toBe(false)
  })

  it('reads the IPv4 inside mapped, translated and compatible forms, in any spelling', () => {
    expect(embeddedIpv4('::ffff:7f00:1')).toBe('127.0.0.1')
    expect(embeddedIpv4('::10.0.0.1')).toBe('10.0.0.1')
    expect(embeddedIpv4('0:0:0:0:0:FFFF:0A00:0001')).toBe('10.0.0.1')
    expect(embeddedIpv4('::ffff:0:10.0.0.1')).toBe('10.0.0.1')
    expect(embeddedIpv4('2001:db8::1')).toBeNull()
    expect(canonicalIpv6('0:0:0:0:0:0:0:1')).toBe('::1')
  })
})

describe('urlShapeProblem', () => {
  it.each([
    'https://example.com/a.pdf',
    'http://93.184.216.34/x',
    'http://[2606:4700::1111]:8080/x',
    'HTTPS://Example.COM/A?q=1#f',
    'http://user-less.example/path%5Cencoded',
  ])('accepts %s', (url) => {
    expect(urlShapeProblem(url)).toBeNull()
  })

  it.each([
    ['file:///etc/passwd', 'not file:'],
    ['FILE:///etc/passwd', 'not file:'],
    ['File://localhost/etc/passwd', 'not file:'],
    ['ftp://example.com/a', 'not ftp:'],
    ['gopher://example.com/', 'not gopher:'],
    ['javascript:alert(1)', 'not javascript:'],
    ['\\\\fileserver\\share\\a.pdf', 'backslash'],
    ['http:\\\\example.com\\a.pdf', 'backslash'],
    ['http://example.com\\@169.254.169.254/', 'backslash'],
    ['http://user:pass@example.com/', 'credentials'],
    ['http://2130706433/', 'unusual spelling'],
    ['http://0x7f000001/', 'unusual spelling'],
    ['http://0177.0.0.1/', 'unusual spelling'],
    ['http://0x7f.1/', 'unusual spelling'],
    ['http://127.1/', 'unusual spelling'],
    ['http://127.0.0.1./', 'unusual spelling'],
    ['http://%31%32%37.0.0.1/', 'unusual spelling'],
    ['http://\uff11\uff12\uff17.0.0.1/', 'unusual spelling'],
    ['http://1572395042/', 'unusual spelling'], // a public address, still refused
    ['http://exa mple.com/', 'spaces or control'],
    ['http://example.com/\n', 'spaces or control'],
    ['not a url', 'spaces or control'],
    ['//example.com/a', 'not a valid URL'],
  ])('refuses %s (%s)', (url, why) => {
    expect(urlShapeProblem(url)).toContain(why)
  })
})

describe("AllowedNetworks (an administrator's private networks)", () => {
  it('allows addresses inside the named networks and nothing else private', () => {
    const nets = AllowedNetworks.parse('10.250.0.2/32, fd00:1::/64')
    expect(addressAllowed('10.250.0.2', false, nets)).toBe(true)
    expect(addressAllowed('::ffff:10.250.0.2', false, nets)).toBe(true)
    expect(addressAllowed('fd00:1::5', false, nets)).toBe(true)
    expect(addressAllowed('10.250.0.1', false, nets)).toBe(false)
    expect(addressAllowed('10.0.0.1', false, nets)).toBe(false)
    expect(addressAllowed('fd00:2::5', false, nets)).toBe(false)
    expect(addressAllowed('127.0.0.1', false, nets)).toBe(false)
    // Public addresses stay allowed; without a list nothing private is.
    expect(addressAllowed('93.184.215.14', false, nets)).toBe(true)
    expect(addressAllowed('10.250.0.2', false, AllowedNetworks.parse(''))).toBe(false)
  })

  it('refuses a list with an entry that is not a CIDR, naming it', () => {
    expect(AllowedNetworks.parse(undefined)).toBeUndefined()
    expect(() => AllowedNetworks.parse('10.0.0.0/8,10.1.2.3')).toThrow(/"10.1.2.3" is not a CIDR/)
    expect(() => AllowedNetworks.parse('10.0.0.0/33')).toThrow(/not a CIDR/)
    expect(() => AllowedNetworks.parse('intranet/8')).toThrow(/not a CIDR/)
    expect(AllowedNetworks.parse('10.0.0.0/8')!.cidrs).toEqual(['10.0.0.0/8'])
  })
})

describe("the cluster's own networks", () => {
  const cluster = AllowedNetworks.parse('2001:db9:10::/56,203.0.114.0/24')!
  it('are refused though their addresses are global, unless an administrator named them', () => {
    expect(addressAllowed('2001:db9:10::1234', false)).toBe(true)
    expect(addressAllowed('2001:db9:10::1234', false, undefined, cluster)).toBe(false)
    expect(addressAllowed('203.0.114.9', false, undefined, cluster)).toBe(false)
    expect(addressAllowed('::ffff:203.0.114.9', false, undefined, cluster)).toBe(false)
    expect(addressAllowed('2001:db9:11::1', false, undefined, cluster)).toBe(true)
    expect(addressAllowed('2001:db9:10::1234', false, AllowedNetworks.parse('2001:db9:10::1234/128'), cluster)).toBe(
      true,
    )
    // Private ranges stay refused whatever the cluster's list says.
    expect(addressAllowed('10.1.2.3', false, undefined, cluster)).toBe(false)
  })
})
