import { describe, expect, it } from 'vitest'
import { AllowedNetworks } from '../contract/address-policy.js'
import { clientAddress } from './forwarded.js'

describe('the client address behind trusted proxies', () => {
  const ingress = AllowedNetworks.parse('10.244.0.0/16')

  it('is the peer when no proxy is trusted, or the peer is not one, whatever X-Forwarded-For says', () => {
    expect(clientAddress('203.0.113.7', '198.51.100.1', undefined)).toBe('203.0.113.7')
    expect(clientAddress('203.0.113.7', '198.51.100.1', ingress)).toBe('203.0.113.7')
  })

  it('is the first hop from the right outside the trusted networks', () => {
    expect(clientAddress('10.244.1.5', '203.0.113.7', ingress)).toBe('203.0.113.7')
    // A client that forges the left of the header is still counted under its own address.
    expect(clientAddress('10.244.1.5', '198.51.100.1, 203.0.113.7', ingress)).toBe('203.0.113.7')
    expect(clientAddress('10.244.1.5', '198.51.100.1, 203.0.113.7, 10.244.2.9', ingress)).toBe('203.0.113.7')
    // Only trusted hops: the leftmost one.
    expect(clientAddress('10.244.1.5', '10.244.3.3', ingress)).toBe('10.244.3.3')
    expect(clientAddress('10.244.1.5', undefined, ingress)).toBe('10.244.1.5')
  })
})
