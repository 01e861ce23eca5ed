import Type from 'typebox'
import { readSettings, Setting, SettingsError } from '../../contract/settings.js'

/** Console settings, read once at start from the environment (README: Configuration). */
export interface ConsoleConfig {
  /** Base URL people reach the gateway at: invite links and the OIDC redirect URI start with it. */
  publicUrl: string
  /**
   * Why the console is off, or null. Without DUTIL_PUBLIC_URL on a gateway listening on every
   * address there is no address to put in invite and sign-in links: the API runs, the console does not.
   */
  off: string | null
  /** Cookies without Secure: only for `make dev` and tests on plain http loopback. */
  insecureCookies: boolean
  oidc: OidcConfig | null
  /** argon2 work: at most `concurrency` at once, `maxQueued` waiting. */
  passwordWork: { concurrency: number; maxQueued: number }
  /**
   * Abuse bounds: active keys per external person, playground runs per person per minute, and
   * console API requests per client address per minute before sign-in.
   */
  limits: {
    maxKeysPerExternal: number
    keysPerDay: number
    playgroundRunsPerMinute: number
    anonymousRequestsPerMinute: number
  }
}

export interface OidcConfig {
  issuer: string
  clientId: string
  clientSecret: string
  /** E-mail domains whose verified accounts become Members on first sign-in. */
  allowedDomains: string[]
  /** Button label, e.g. "Google Workspace". */
  displayName: string
  /** Whether accounts bound to the provider may hold and use a password too. */
  accountPasswords: boolean
}

/** The console's environment variables (README: Configuration), checked once at start with the gateway's. */
export const CONSOLE_SETTINGS = Type.Object({
  DUTIL_PUBLIC_URL: Setting.optional(Setting.url('Base URL people reach the gateway at (invite links, OIDC redirect)')),
  DUTIL_CONSOLE_INSECURE_COOKIES: Setting.boolean('Cookies without Secure: only for plain-http loopback', false),
  DUTIL_OIDC_ISSUER: Setting.optional(
    Setting.url('OpenID Connect issuer; empty turns identity-provider sign-in off', { schemes: ['https', 'http'] }),
  ),
  DUTIL_OIDC_CLIENT_ID: Setting.optional(Setting.string('OIDC client id (needed with DUTIL_OIDC_ISSUER)')),
  DUTIL_OIDC_CLIENT_SECRET: Setting.optional(Setting.string('OIDC client secret (needed with DUTIL_OIDC_ISSUER)')),
  DUTIL_OIDC_ALLOWED_DOMAINS: Setting.optional(
    Setting.string('Comma-separated e-mail domains that become members on first sign-in'),
  ),
  DUTIL_OIDC_DISPLAY_NAME: Setting.optional(Setting.string('Sign-in button label')),
  DUTIL_OIDC_ACCOUNT_PASSWORDS: Setting.boolean(
    'Whether accounts bound to the identity provider may also hold and use a password (off: they sign in through the provider only)',
    true,
  ),
  DUTIL_CONSOLE_PASSWORD_CONCURRENCY: Setting.integer('argon2 hashes and verifications run at once', {
    default: 2,
    minimum: 1,
    maximum: 64,
  }),
  DUTIL_CONSOLE_MAX_KEYS_PER_EXTERNAL: Setting.integer('Active API keys an external person may hold', {
    default: 5,
    minimum: 0,
    maximum: 1000,
  }),
  DUTIL_CONSOLE_KEYS_PER_DAY: Setting.integer(
    'API keys one person may create in the console per day (UTC); more answer 429',
    { default: 50, minimum: 1, maximum: 100_000 },
  ),
  DUTIL_PLAYGROUND_RUNS_PER_MINUTE: Setting.integer('Playground runs one person may start per minute', {
    default: 20,
    minimum: 1,
    maximum: 10_000,
  }),
  DUTIL_CONSOLE_ANONYMOUS_REQUESTS_PER_MINUTE: Setting.integer(
    'Console API requests one client address may make per minute without a session; more answer 429',
    {
      default: 120,
      minimum: 1,
      maximum: 100_000,
    },
  ),
  DUTIL_CONSOLE_PASSWORD_QUEUE: Setting.integer('Password checks that may wait for a slot; more are answered 429', {
    default: 64,
    minimum: 0,
    maximum: 10_000,
  }),
})

/** Hosts a link cannot point at: the gateway's "every address" listen hosts. */
const UNSPECIFIED_HOSTS = new Set(['0.0.0.0', '[::]', '::'])

export function loadConsoleConfig(env: NodeJS.ProcessEnv, fallbackUrl: string): ConsoleConfig {
  const s = readSettings(CONSOLE_SETTINGS, env)
  const missing = s.DUTIL_OIDC_ISSUER
    ? (['DUTIL_OIDC_CLIENT_ID', 'DUTIL_OIDC_CLIENT_SECRET'] as const).filter((n) => !s[n])
    : []
  if (missing.length) throw new SettingsError(missing.map((n) => `${n} is required when DUTIL_OIDC_ISSUER is set`))
  const oidc: OidcConfig | null = s.DUTIL_OIDC_ISSUER
    ? {
        issuer: s.DUTIL_OIDC_ISSUER,
        clientId: s.DUTIL_OIDC_CLIENT_ID!,
        clientSecret: s.DUTIL_OIDC_CLIENT_SECRET!,
        allowedDomains: (s.DUTIL_OIDC_ALLOWED_DOMAINS ?? '')
          .split(',')
          .map((d) => d.trim().toLowerCase().replace(/^@/, ''))
          .filter(Boolean),
        displayName: s.DUTIL_OIDC_DISPLAY_NAME || 'your identity provider',
        accountPasswords: s.DUTIL_OIDC_ACCOUNT_PASSWORDS,
      }
    : null
  const fallbackUsable = !UNSPECIFIED_HOSTS.has(new URL(fallbackUrl).hostname)
  return {
    publicUrl: (s.DUTIL_PUBLIC_URL || (fallbackUsable ? fallbackUrl : 'http://127.0.0.1')).replace(/\/+$/, ''),
    off:
      s.DUTIL_PUBLIC_URL || fallbackUsable
        ? null
        : 'The console is off: set DUTIL_PUBLIC_URL (chart: gateway.console.publicUrl) to the address people reach it at.',
    insecureCookies: s.DUTIL_CONSOLE_INSECURE_COOKIES,
    oidc,
    passwordWork: { concurrency: s.DUTIL_CONSOLE_PASSWORD_CONCURRENCY, maxQueued: s.DUTIL_CONSOLE_PASSWORD_QUEUE },
    limits: {
      maxKeysPerExternal: s.DUTIL_CONSOLE_MAX_KEYS_PER_EXTERNAL,
      keysPerDay: s.DUTIL_CONSOLE_KEYS_PER_DAY,
      playgroundRunsPerMinute: s.DUTIL_PLAYGROUND_RUNS_PER_MINUTE,
      anonymousRequestsPerMinute: s.DUTIL_CONSOLE_ANONYMOUS_REQUESTS_PER_MINUTE,
    },
  }
}
