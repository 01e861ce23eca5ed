import type { LookupAddress } from 'node:dns'
import { describe, expect, it } from 'vitest'
import { checkDestination, type Resolver } from './destination.js'

const resolving =
  (table: Record<string, string[]>): Resolver =>
  async (host) => {
    const list = table[host]
    if (!list) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    return list.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }))
  }

const dns = resolving({
  'public.example': ['93.184.216.34', '2606:2800:220:1::1'],
  'metadata.example': ['169.254.169.254'],
  'mixed.example': ['93.184.216.34', '10.0.0.7'], // one private answer refuses the host
  'mapped.example': ['::ffff:192.168.0.1'],
  'ula.example': ['fd12:3456::1'],
  'loop.example': ['127.0.0.1'],
  'empty.example': [],
})

describe('checkDestination', () => {
  it('resolves a public host and returns the checked addresses to connect to', async () => {
    const res = await checkDestination('https://public.example/hook', { allowLoopback: false, resolver: dns })
    expect(res).toMatchObject({
      kind: 'ok',
      addresses: [{ address: '93.184.216.34' }, { address: '2606:2800:220:1::1' }],
    })
  })

  it.each(['metadata.example', 'mixed.example', 'mapped.example', 'ula.example', 'loop.example'])(
    'refuses %s',
    async (host) => {
      const res = await checkDestination(`https://${host}/hook`, { allowLoopback: false, resolver: dns })
      expect(res.kind).toBe('refused')
    },
  )

  it('refuses literals without resolving them', async () => {
    const never: Resolver = async () => {
      throw new Error('must not resolve')
    }
    for (const url of [
      'https://169.254.169.254/',
      'https://[fd00:ec2::254]/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://127.0.0.1/',
    ]) {
      expect((await checkDestination(url, { allowLoopback: false, resolver: never })).kind).toBe('refused')
    }
    expect((await checkDestination('https://93.184.216.34/', { allowLoopback: false, resolver: never })).kind).toBe(
      'ok',
    )
  })

  it('allows loopback (and only loopback) with the dev allowance', async () => {
    expect((await checkDestination('https://loop.example/', { allowLoopback: true, resolver: dns })).kind).toBe('ok')
    expect((await checkDestination('https://127.0.0.1:9443/', { allowLoopback: true, resolver: dns })).kind).toBe('ok')
    expect((await checkDestination('https://metadata.example/', { allowLoopback: true, resolver: dns })).kind).toBe(
      'refused',
    )
    expect((await checkDestination('https://169.254.169.254/', { allowLoopback: true, resolver: dns })).kind).toBe(
      'refused',
    )
  })

  it('refuses non-https and embedded credentials', async () => {
    expect(await checkDestination('http://public.example/', { allowLoopback: false, resolver: dns })).toMatchObject({
      kind: 'refused',
      reason: expect.stringContaining('https'),
    })
    expect(
      await checkDestination('https://u:p@public.example/', { allowLoopback: false, resolver: dns }),
    ).toMatchObject({ kind: 'refused', reason: expect.stringContaining('credentials') })
  })

  it('treats a host that does not resolve as a retryable failure, not a refusal', async () => {
    expect((await checkDestination('https://nowhere.example/', { allowLoopback: false, resolver: dns })).kind).toBe(
      'unresolved',
    )
    expect((await checkDestination('https://empty.example/', { allowLoopback: false, resolver: dns })).kind).toBe(
      'unresolved',
    )
  })
})
