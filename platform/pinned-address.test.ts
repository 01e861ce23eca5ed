import type { LookupAddress } from 'node:dns'
import { describe, expect, it } from 'vitest'
import { pinnedLookup, type Resolver, resolveAllowedAddresses } from './pinned-address.js'

const answers =
  (table: Record<string, LookupAddress[] | Error>): Resolver =>
  async (host) => {
    const a = table[host]
    if (a instanceof Error) throw a
    return a ?? []
  }
const policy = { allowLoopback: false }

describe('pinned addresses', () => {
  it('allows a host whose every answer is public, refuses one with a single private answer', async () => {
    const resolver = answers({
      'public.example': [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
      'mixed.example': [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ],
      'mapped.example': [{ address: '::ffff:127.0.0.1', family: 6 }],
      'gone.example': Object.assign(new Error('nope'), { code: 'ENOTFOUND' }),
    })
    expect(await resolveAllowedAddresses('public.example', policy, resolver)).toEqual({
      kind: 'ok',
      addresses: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
    })
    expect(await resolveAllowedAddresses('mixed.example', policy, resolver)).toEqual({
      kind: 'refused',
      address: '10.0.0.5',
    })
    expect(await resolveAllowedAddresses('mapped.example', policy, resolver)).toEqual({
      kind: 'refused',
      address: '::ffff:127.0.0.1',
    })
    expect(await resolveAllowedAddresses('gone.example', policy, resolver)).toEqual({
      kind: 'unresolved',
      code: 'ENOTFOUND',
    })
    expect(await resolveAllowedAddresses('empty.example', policy, resolver)).toEqual({ kind: 'unresolved' })
  })

  it('takes an IP literal as its own answer, without asking DNS, under the same policy', async () => {
    const resolver: Resolver = async () => {
      throw new Error('DNS must not be asked')
    }
    expect(await resolveAllowedAddresses('127.0.0.1', policy, resolver)).toEqual({
      kind: 'refused',
      address: '127.0.0.1',
    })
    expect(await resolveAllowedAddresses('127.0.0.1', { ...policy, allowLoopback: true }, resolver)).toEqual({
      kind: 'ok',
      addresses: [{ address: '127.0.0.1', family: 4 }],
    })
  })

  it('answers every lookup a request makes with the checked addresses', () => {
    const lookup = pinnedLookup([{ address: '93.184.216.34', family: 4 }])
    const seen: unknown[] = []
    lookup('elsewhere.example', {}, (err, address, family) => seen.push([err, address, family]))
    lookup('elsewhere.example', { all: true }, (err, address) => seen.push([err, address]))
    expect(seen).toEqual([
      [null, '93.184.216.34', 4],
      [null, [{ address: '93.184.216.34', family: 4 }]],
    ])
    expect(() => pinnedLookup([])).toThrow()
  })
})
