import { describe, expect, it } from 'vitest'
import { loadConsoleConfig } from './config.js'

describe('console configuration', () => {
  it('defaults to Secure cookies, no identity provider and 400 days of usage', () => {
    const c = loadConsoleConfig({}, 'http://127.0.0.1:8080')
    expect(c).toMatchObject({ publicUrl: 'http://127.0.0.1:8080', insecureCookies: false, oidc: null })
  })

  it('reads the identity provider and its allowed domains', () => {
    const c = loadConsoleConfig(
      {
        DUTIL_PUBLIC_URL: 'https://dutil.example.com/',
        DUTIL_OIDC_ISSUER: 'https://idp.example.com',
        DUTIL_OIDC_CLIENT_ID: 'c',
        DUTIL_OIDC_CLIENT_SECRET: 's',
        DUTIL_OIDC_ALLOWED_DOMAINS: 'Example.com, @corp.example',
      },
      'http://x',
    )
    expect(c.publicUrl).toBe('https://dutil.example.com')
    expect(c.oidc).toMatchObject({ issuer: 'https://idp.example.com', allowedDomains: ['example.com', 'corp.example'] })
  })

  it('refuses an identity provider without client credentials', () => {
    expect(() => loadConsoleConfig({ DUTIL_OIDC_ISSUER: 'https://idp.example.com' }, 'http://x')).toThrow(
      /DUTIL_OIDC_CLIENT_ID/,
    )
  })

  it('turns the console off, saying why, when no public URL is set and the gateway listens on every address', () => {
    const off = loadConsoleConfig({}, 'http://0.0.0.0:8080')
    expect(off.off).toBe(
      'The console is off: set DUTIL_PUBLIC_URL (chart: gateway.console.publicUrl) to the address people reach it at.',
    )
    expect(loadConsoleConfig({}, 'http://[::]:8080').off).not.toBeNull()
    expect(loadConsoleConfig({ DUTIL_PUBLIC_URL: 'https://dutil.example.com' }, 'http://0.0.0.0:8080')).toMatchObject({
      off: null,
      publicUrl: 'https://dutil.example.com',
    })
    expect(loadConsoleConfig({}, 'http://127.0.0.1:8080').off).toBeNull()
  })
})
