import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { inject } from 'vitest'
import { REPO_ROOT } from '../../platform/platform.js'
import { hotp, base32Decode, timeStep } from '../../../gateway/console/totp.js'

export interface ConsoleResponse<T = any> {
  status: number
  headers: Headers
  body: T
}

/**
 * A console API client as a browser would be: it keeps the cookies the gateway sets and sends
 * the session's CSRF token on state-changing calls (unless told not to).
 */
export class ConsoleClient {
  private readonly cookies = new Map<string, string>()
  csrf = ''

  get sessionCookie(): string | undefined {
    return this.cookies.get('dutil_session')
  }

  async call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    opts: { csrf?: boolean; origin?: string; forwardedFor?: string } = {},
  ): Promise<ConsoleResponse<T>> {
    const headers: Record<string, string> = {}
    if (opts.forwardedFor) headers['X-Forwarded-For'] = opts.forwardedFor
    if (body !== undefined) headers['Content-Type'] = 'application/json'
    if (this.cookies.size) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
    if (opts.csrf !== false && this.csrf && method !== 'GET') headers['X-CSRF-Token'] = this.csrf
    if (opts.origin) headers.Origin = opts.origin
    const res = await fetch(`${inject('gatewayUrl')}/console/api${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
    })
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';')
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]
      if (attrs.some((a) => a.trim().toLowerCase() === 'max-age=0')) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      // keep the text
    }
    const out = { status: res.status, headers: res.headers, body: parsed as T }
    const token = (parsed as { csrfToken?: string } | undefined)?.csrfToken
    if (res.ok && token) this.csrf = token
    return out
  }

  async signIn(email: string, password: string): Promise<ConsoleResponse> {
    return this.call('POST', '/session', { email, password })
  }
}

/** `dutil admin create` against the test platform, as an operator would run it. */
export function bootstrapAdmin(email: string): { link: string; expiresAt: string } {
  const out = execFileSync(
    process.execPath,
    [join(REPO_ROOT, 'bin', 'dutil.js'), 'admin', 'create', '--email', email, '--json'],
    {
      env: { ...process.env, KUBECONFIG: inject('kubeconfigPath'), DUTIL_PUBLIC_URL: inject('gatewayUrl') },
      encoding: 'utf8',
    },
  )
  return JSON.parse(out)
}

/** The token of an invite link: its fragment (never sent to the server). */
export function inviteToken(link: string): string {
  return new URL(link).hash.slice(1)
}

/** The TOTP code of a base32 secret for the time step `offset` steps from now. */
export function totpCode(secret: string, offset = 0, now = Date.now()): string {
  return hotp(base32Decode(secret), timeStep(now) + offset)
}

/** The TOTP code of a base32 secret at an absolute time step. */
export function totpCodeAtStep(secret: string, step: number): string {
  return hotp(base32Decode(secret), step)
}

export { timeStep }

export const uniqueEmail = (who: string, domain = 'example.com') =>
  `${who}-${Math.random().toString(36).slice(2, 8)}@${domain}`

/** Invites someone with `role` (as the admin `by`) and accepts the invite: a signed-in client. */
export async function invitePerson(
  by: ConsoleClient,
  role: 'admin' | 'member' | 'external',
  password: string,
  email = uniqueEmail(role),
): Promise<{ client: ConsoleClient; email: string; id: string }> {
  const invited = await by.call('POST', '/members/invites', { email, role })
  if (invited.status !== 201) throw new Error(`invite failed: ${invited.status} ${JSON.stringify(invited.body)}`)
  const client = new ConsoleClient()
  const accepted = await client.call('POST', '/invites/accept', {
    token: inviteToken(invited.body.link),
    name: `Test ${role}`,
    password,
  })
  if (accepted.status !== 201)
    throw new Error(`accepting the invite failed: ${accepted.status} ${JSON.stringify(accepted.body)}`)
  return { client, email, id: accepted.body.user.id }
}
