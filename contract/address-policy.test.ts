import { describe, expect, it } from 'vitest'
import { addressAllowed, classifyAddress, embeddedIpv4 } from './address-policy.js'

describe('classifyAddress', () => {
  it.each([
    ['10.1.2.3', 'refused'],
    ['172.16.0.1', 'refused'],
    ['172.31.255.255', 'refused'],
    ['192.168.1.1', 'refused'],
    ['100.64.0.1', 'refused'],
    ['169.254.169.254', 'refused'],
    ['224.0.0.1', 'refused'],
    ['0.0.0.0', 'refused'],
    ['fd00:ec2::254', 'refused'],
    ['fe80::1', 'refused'],
    ['ff02::1', 'refused'],
    ['::ffff:10.0.0.1', 'refused'],
    ['::ffff:a00:1', 'refused'],
    ['::ffff:169.254.169.254', 'refused'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['93.184.216.34', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['not-an-ip', 'refused'],
  ])('%s is %s', (address, verdict) => {
    expect(classifyAddress(address)).toBe(verdict)
  })

  it('allows loopback only with the dev allowance', () => {
    expect(addressAllowed('127.0.0.1', false)).toBe(false)
    expect(addressAllowed('127.0.0.1', true)).toBe(true)
    expect(addressAllowed('10.0.0.1', true)).toBe(false)
  })

  it('reads the IPv4 inside mapped and compatible forms', () => {
    expect(embeddedIpv4('::ffff:7f00:1')).toBe('127.0.0.1')
    expect(embeddedIpv4('::10.0.0.1')).toBe('10.0.0.1')
    expect(embeddedIpv4('2001:db8::1')).toBeNull()
  })
})
