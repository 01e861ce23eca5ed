import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkOutboundUrl, outboundGet, redirectTarget, type Resolver } from './outbound-fetch.js'
import { UrlRefusedError } from './runner-error.js'

/**
 * The guard is tested with an injected resolver (names "resolve" to whatever the test says, so
 * no real lookup happens) and a loopback server. Refused addresses are refused before any
 * connection: no test traffic ever goes to a private range.
 */
const hits: string[] = []
const server = http.createServer((req, res) => {
  hits.push(`${req.headers.host} ${req.url}`)
  const url = new URL(req.url ?? '/', 'http://x')
  if (url.pathname === '/redirect') {
    res.writeHead(302, { location: url.searchParams.get('to') ?? '/' })
    return void res.end()
  }
  if (url.pathname === '/loop') {
    res.writeHead(301, { location: '/loop' })
    return void res.end()
  }
  if (url.pathname === '/missing') {
    res.writeHead(404)
    return void res.end('no')
  }
  res.end(`hello from ${req.headers.host}`)
})
let base = ''
let port = 0
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as AddressInfo).port
  base = `http://127.0.0.1:${port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

const resolverFor = (table: Record<string, string[]>): Resolver & { calls: string[] } => {
  const calls: string[] = []
  const fn = async (host: string) => {
    calls.push(host)
    const addrs = table[host]
    if (!addrs) throw new Error('ENOTFOUND')
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return Object.assign(fn, { calls })
}

async function text(res: { body: AsyncIterable<Buffer> }): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of res.body) chunks.push(c)
  return Buffer.concat(chunks).toString()
}

describe('checkOutboundUrl', () => {
  it.each([
    ['metadata.test', ['169.254.169.254']],
    ['aws-v6-metadata.test', ['fd00:ec2::254']],
    ['private.test', ['10.0.0.5']],
    ['mapped.test', ['::ffff:192.168.0.1']],
    ['mixed.test', ['93.184.216.34', '172.16.0.9']], // one private answer refuses the host
    ['multicast.test', ['224.0.0.251']],
    ['ula.test', ['fd12:3456::1']],
  ])('refuses %s resolving to %j', async (host, addrs) => {
    const resolver = resolverFor({ [host]: addrs })
    const err = await checkOutboundUrl(`https://${host}/a.pdf`, { allowLoopback: true, resolver }).catch((e) => e)
    expect(err).toBeInstanceOf(UrlRefusedError)
    expect(err).toMatchObject({ code: 'upstream_rejected', message: expect.stringContaining('not allowed') })
  })

  it('refuses loopback in strict mode, allows it with the dev allowance', async () => {
    const resolver = resolverFor({ 'localhost.test': ['127.0.0.1'] })
    await expect(checkOutboundUrl('http://localhost.test/', { allowLoopback: false, resolver })).rejects.toMatchObject({
      code: 'upstream_rejected',
    })
    await expect(checkOutboundUrl('http://[::1]/', { allowLoopback: false, resolver })).rejects.toMatchObject({
      code: 'upstream_rejected',
    })
    await expect(checkOutboundUrl('http://localhost.test/', { allowLoopback: true, resolver })).resolves.toMatchObject({
      address: '127.0.0.1',
    })
  })

  it('refuses by shape before resolving anything', async () => {
    const resolver = resolverFor({})
    for (const url of [
      'file:///etc/passwd',
      'FILE:///etc/passwd',
      '\\\\host\\share',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://u:p@example.com/',
    ]) {
      await expect(checkOutboundUrl(url, { allowLoopback: true, resolver })).rejects.toBeInstanceOf(UrlRefusedError)
    }
    expect(resolver.calls).toEqual([])
  })

  it('says when a host does not resolve (a failure to load, not a refusal)', async () => {
    const err = await checkOutboundUrl('https://nowhere.test/', {
      allowLoopback: false,
      resolver: resolverFor({}),
    }).catch((e) => e)
    expect(err).toMatchObject({ code: 'upstream_rejected', message: 'The host nowhere.test could not be resolved.' })
    expect(err).not.toBeInstanceOf(UrlRefusedError)
  })
})

describe('outboundGet', () => {
  it('refuses the loopback server in strict mode without connecting to it', async () => {
    hits.length = 0
    await expect(outboundGet(`${base}/file`, { allowLoopback: false })).rejects.toMatchObject({
      code: 'upstream_rejected',
    })
    expect(hits).toEqual([])
  })

  it('connects to the address that was checked, not to a second lookup', async () => {
    // "pinned.test" exists only in the injected resolver: the request can only arrive if the
    // connection used the checked address.
    const resolver = resolverFor({ 'pinned.test': ['127.0.0.1'] })
    const res = await outboundGet(`http://pinned.test:${port}/file`, { allowLoopback: true, resolver })
    expect(await text(res)).toBe(`hello from pinned.test:${port}`)
    expect(resolver.calls).toEqual(['pinned.test'])
  })

  it.each([
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['a name resolving to a private address', 'http://internal.test/admin'],
    ['a decimal spelling', 'http://2130706433/'],
    ['a file: URL', 'file:///etc/passwd'],
    ['a backslash path', '\\\\internal.test\\share'],
    ['an IPv4-mapped private address', 'http://[::ffff:a00:5]/'],
  ])('refuses a redirect to %s, and connects nowhere', async (_what, to) => {
    hits.length = 0
    const resolver = resolverFor({ 'internal.test': ['10.1.2.3'] })
    const err = await outboundGet(`${base}/redirect?to=${encodeURIComponent(to)}`, {
      allowLoopback: true,
      resolver,
    }).catch((e) => e)
    expect(err).toBeInstanceOf(UrlRefusedError)
    expect(err).toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringContaining('redirects to a URL that is refused'),
    })
    expect(hits).toHaveLength(1) // only the redirecting request itself
  })

  it('does not call a redirect to a host that does not resolve refused', async () => {
    const err = await outboundGet(`${base}/redirect?to=${encodeURIComponent('http://nowhere.test/x')}`, {
      allowLoopback: true,
      resolver: resolverFor({}),
    }).catch((e) => e)
    expect(err).toMatchObject({ code: 'upstream_rejected', message: 'The host nowhere.test could not be resolved.' })
    expect(err).not.toBeInstanceOf(UrlRefusedError)
  })

  it('follows allowed redirects and reports a final error status', async () => {
    const res = await outboundGet(`${base}/redirect?to=/file`, { allowLoopback: true })
    expect(await text(res)).toBe(`hello from 127.0.0.1:${port}`)
    await expect(outboundGet(`${base}/redirect?to=/missing`, { allowLoopback: true })).rejects.toMatchObject({
      code: 'upstream_rejected',
      upstreamStatus: 404,
    })
  })

  it('stops after the redirect limit', async () => {
    await expect(outboundGet(`${base}/loop`, { allowLoopback: true, maxRedirects: 3 })).rejects.toMatchObject({
      message: expect.stringContaining('more than 3 redirects'),
    })
  })
})

describe('redirectTarget', () => {
  const base = new URL('https://example.com/dir/page')
  it('keeps absolute locations as written and resolves relative ones', () => {
    expect(redirectTarget('http://2130706433/', base)).toBe('http://2130706433/')
    expect(redirectTarget('//other.example/x', base)).toBe('https://other.example/x')
    expect(redirectTarget('next', base)).toBe('https://example.com/dir/next')
    expect(redirectTarget('\\\\host\\x', base)).toBe('\\\\host\\x')
  })
})
