import { describe, expect, it } from 'vitest'
import { withoutAddresses } from './redact-addresses.js'

describe('callback errors shown to people who are not admins', () => {
  it('name no IP address, of either family', () => {
    expect(
      withoutAddresses(
        'The host hooks.internal resolves to 10.96.0.1, which is not an allowed destination (private, loopback, link-local, multicast or unique-local).',
      ),
    ).toBe(
      'The host hooks.internal resolves to (an address), which is not an allowed destination (private, loopback, link-local, multicast or unique-local).',
    )
    expect(withoutAddresses('The host x resolves to fd00::1:2, which is not allowed')).toBe(
      'The host x resolves to (an address), which is not allowed',
    )
    expect(withoutAddresses('connect ECONNREFUSED 127.0.0.1:8443')).toBe('connect ECONNREFUSED (an address):8443')
  })

  it('leave other text as it is', () => {
    expect(withoutAddresses('HTTP 503 at 12:30:45')).toBe('HTTP 503 at 12:30:45')
    expect(withoutAddresses(null)).toBeNull()
  })
})
