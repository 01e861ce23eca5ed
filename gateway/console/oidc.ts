import * as client from 'openid-client'
import type { OidcConfig } from './config.js'

export interface OidcFlow {
  url: string
  state: string
  verifier: string
  nonce: string
}

export interface OidcIdentity {
  subject: string
  email: string | null
  emailVerified: boolean
  name: string | null
}

/**
 * The console as an OpenID Connect relying party (openid-client): authorization code flow
 * with PKCE, state and nonce; the identity comes from the verified ID token. Discovery runs on
 * first use and is retried after a failure, so a provider that starts later is found.
 */
export class OidcRelyingParty {
  private discovered: Promise<client.Configuration> | undefined

  constructor(
    private readonly config: OidcConfig,
    private readonly redirectUri: string,
  ) {}

  private configuration(): Promise<client.Configuration> {
    if (!this.discovered) {
      const issuer = new URL(this.config.issuer)
      // Plain http is only accepted for a provider on loopback (a local test provider).
      const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname)
      this.discovered = client
        .discovery(
          issuer,
          this.config.clientId,
          this.config.clientSecret,
          undefined,
          loopback && issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined,
        )
        .catch((err) => {
          this.discovered = undefined
          throw err
        })
    }
    return this.discovered
  }

  async start(): Promise<OidcFlow> {
    const config = await this.configuration()
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const nonce = client.randomNonce()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    })
    return { url: url.href, state, verifier, nonce }
  }

  async finish(
    callbackUrl: URL,
    flow: OidcFlow | { state: string; verifier: string; nonce: string },
  ): Promise<OidcIdentity> {
    const config = await this.configuration()
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    })
    const claims = tokens.claims()
    if (!claims) throw new Error('no ID token')
    let email = typeof claims.email === 'string' ? claims.email : null
    let verified = claims.email_verified === true
    let name = typeof claims.name === 'string' ? claims.name : null
    if (!email) {
      // Some providers put e-mail only in the userinfo response.
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub)
      email = typeof info.email === 'string' ? info.email : null
      verified = info.email_verified === true
      name ??= typeof info.name === 'string' ? info.name : null
    }
    return { subject: claims.sub, email, emailVerified: verified, name }
  }
}
