import https from 'node:https'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'

export interface TestIdentityProvider {
  issuer: string
  clientId: string
  clientSecret: string
  stop(): Promise<void>
}

/**
 * A real OpenID provider for the console's identity-provider sign-in: `oidc-provider` (a
 * certified implementation) over https with the test CA's loopback certificate, with its
 * development login pages. Whatever login is typed becomes the account: its e-mail is the
 * login itself, verified unless the login starts with "unverified".
 */
export async function startIdentityProvider(opts: {
  cert: Buffer
  key: Buffer
  redirectUri: string
}): Promise<TestIdentityProvider> {
  const clientId = 'dutil-console'
  const clientSecret = 'test-client-secret-not-for-production'
  const server = https.createServer({ cert: opts.cert, key: opts.key })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const issuer = `https://localhost:${(server.address() as AddressInfo).port}`
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [opts.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['dutil-test-provider-cookie-key'] },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({
        sub: `sub-${id}`,
        email: id.replace(/^unverified[.-]?/, ''),
        email_verified: !id.startsWith('unverified'),
        name: id
          .split('@')[0]
          .replace(/[._-]/g, ' ')
          .replace(/\b\w/g, (c) => c.toUpperCase()),
      }),
    }),
  })
  server.on('request', provider.callback())
  return {
    issuer,
    clientId,
    clientSecret,
    stop: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
}
