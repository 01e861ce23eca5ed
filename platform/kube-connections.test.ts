import type http from 'node:http'
import { KubeConfig } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { reuseConnections } from './kube.js'

type Internals = {
  applyHTTPSOptions(opts: Record<string, unknown>): void
  createAgent(cluster: unknown, opts: Record<string, unknown>): http.Agent
}

const options = (ca: string) => ({
  clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', caData: Buffer.from(ca).toString('base64') }],
  users: [{ name: 'u', token: 't' }],
  contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
  currentContext: 'x',
})

function config(ca: string): KubeConfig {
  const kc = new KubeConfig()
  kc.loadFromOptions(options(ca))
  return kc
}

describe('reuseConnections', () => {
  it('reads the TLS material once per 10 s and keeps one keep-alive agent per material; a changed CA gets its own', () => {
    let now = 0
    const kc = reuseConnections(config('CA one'), () => now)
    const k = kc as unknown as Internals
    const request = () => {
      const opts: Record<string, unknown> = {}
      k.applyHTTPSOptions(opts)
      return { opts, agent: k.createAgent(kc.getCurrentCluster(), { ca: opts.ca }) }
    }
    const a = request()
    const b = request()
    expect(String(a.opts.ca)).toBe('CA one')
    expect(b.opts.ca).toBe(a.opts.ca) // the same bytes, not read again
    expect(b.agent).toBe(a.agent)
    expect((a.agent as unknown as { keepAlive: boolean }).keepAlive).toBe(true)
    // The CA rotates: within the 10 s the old one is still used, after it the new one, on a new agent.
    kc.loadFromOptions(options('CA two'))
    now = 9_000
    expect(String(request().opts.ca)).toBe('CA one')
    now = 10_001
    const c = request()
    expect(String(c.opts.ca)).toBe('CA two')
    expect(c.agent).not.toBe(a.agent)
    // And back to the first material: its agent again.
    expect(k.createAgent(kc.getCurrentCluster(), { ca: Buffer.from('CA one') })).toBe(a.agent)
  })
})
