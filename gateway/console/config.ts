/** Console settings, read once at start from the environment (README: Configuration). */
export interface ConsoleConfig {
  /** Base URL people reach the gateway at: invite links and the OIDC redirect URI start with it. */
  publicUrl: string
  /** Cookies without Secure: only for `make dev` and tests on plain http loopback. */
  insecureCookies: boolean
  oidc: OidcConfig | null
}

export interface OidcConfig {
  issuer: string
  clientId: string
  clientSecret: string
  /** E-mail domains whose verified accounts become Members on first sign-in. */
  allowedDomains: string[]
  /** Button label, e.g. "Google Workspace". */
  displayName: string
}

export function loadConsoleConfig(env: NodeJS.ProcessEnv, fallbackUrl: string): ConsoleConfig {
  const issuer = env.DUTIL_OIDC_ISSUER?.trim()
  const oidc: OidcConfig | null = issuer
    ? {
        issuer,
        clientId: required(env, 'DUTIL_OIDC_CLIENT_ID'),
        clientSecret: required(env, 'DUTIL_OIDC_CLIENT_SECRET'),
        allowedDomains: (env.DUTIL_OIDC_ALLOWED_DOMAINS ?? '')
          .split(',')
          .map((d) => d.trim().toLowerCase().replace(/^@/, ''))
          .filter(Boolean),
        displayName: env.DUTIL_OIDC_DISPLAY_NAME?.trim() || 'your identity provider',
      }
    : null
  return {
    publicUrl: (env.DUTIL_PUBLIC_URL?.trim() || fallbackUrl).replace(/\/+$/, ''),
    insecureCookies: env.DUTIL_CONSOLE_INSECURE_COOKIES === 'true',
    oidc,
  }
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const v = env[name]?.trim()
  if (!v) throw new Error(`missing setting ${name} (needed when DUTIL_OIDC_ISSUER is set)`)
  return v
}
