import { requestLogFields } from '../request-id.js'
import { timingSafeEqual } from 'node:crypto'
import type { Context, Next } from 'koa'
import type { ConsoleUserResource } from '../../contract/console-resources.js'
import { ApiError, invalid, type ErrorDetail } from '../api-error.js'
import { MAX_BODY_BYTES, readJsonBody, UNAUTHENTICATED_BODY_BYTES } from '../json-body.js'
import { can, type Action, type Ownership } from './permissions.js'
import { SESSION_IDLE_MS, type SessionData, type SessionStore } from './sessions.js'
import type { PeopleStore } from '../../platform/people-store.js'
import type { RateLimiter } from '../rate-limit.js'

export const SESSION_COOKIE = 'dutil_session'
export const PENDING_COOKIE = 'dutil_pending'
export const OIDC_COOKIE = 'dutil_oidc'

export interface CookieOptions {
  insecure: boolean
  path?: string
  maxAgeMs?: number
}

/**
 * The name a cookie is sent under. Over https the session cookie is `__Host-` (Secure, Path=/,
 * no Domain: no sibling subdomain or plain-http page can set or shadow it), and path-scoped
 * cookies are `__Secure-`; plain-http dev and tests keep the bare name (browsers refuse the
 * prefixes without Secure).
 */
export function cookieName(name: string, opts: CookieOptions): string {
  if (opts.insecure) return name
  return cookiePath(opts) === '/' ? `__Host-${name}` : `__Secure-${name}`
}

function cookiePath(opts: CookieOptions): string {
  return opts.path ?? (opts.insecure ? '/console' : '/')
}

/** Session cookies: HttpOnly, SameSite=Lax (the OIDC redirect back is a top-level GET), Secure outside dev. */
export function setCookie(ctx: Context, name: string, value: string, opts: CookieOptions): void {
  const parts = [`${cookieName(name, opts)}=${value}`, `Path=${cookiePath(opts)}`, 'HttpOnly', 'SameSite=Lax']
  if (!opts.insecure) parts.push('Secure')
  if (opts.maxAgeMs !== undefined) parts.push(`Max-Age=${Math.floor(opts.maxAgeMs / 1000)}`)
  ctx.append('Set-Cookie', parts.join('; '))
}

export function clearCookie(ctx: Context, name: string, opts: CookieOptions): void {
  setCookie(ctx, name, '', { ...opts, maxAgeMs: 0 })
}

export function readCookie(ctx: Context, name: string, opts: CookieOptions): string | undefined {
  const wanted = cookieName(name, opts)
  const header = ctx.get('Cookie')
  for (const part of header.split(';')) {
    const i = part.indexOf('=')
    if (i > 0 && part.slice(0, i).trim() === wanted) return part.slice(i + 1).trim()
  }
  return undefined
}

export function sessionCookie(ctx: Context, id: string, insecure: boolean): void {
  setCookie(ctx, SESSION_COOKIE, id, { insecure, maxAgeMs: SESSION_IDLE_MS })
}

export interface ConsoleState {
  user: ConsoleUserResource
  session: SessionData
  sessionId: string
}

export function signedIn(ctx: Context): ConsoleState {
  const s = ctx.state.console as ConsoleState | undefined
  if (!s) throw new ApiError('unauthorized', 'Sign in to the console first.')
  return s
}

/** Throws 403 unless the signed-in person may do `action` on something they own or not. */
export function authorize(ctx: Context, action: Action, ownership: Ownership = 'other'): ConsoleState {
  const s = signedIn(ctx)
  if (!can(s.user.spec.role, action, ownership)) throw new ApiError('forbidden', 'Your role does not allow this.')
  return s
}

/**
 * State-changing calls from a browser must come from the console's own origin (Origin header;
 * browsers send it on every POST, PATCH and DELETE), and, once signed in, carry the session's
 * CSRF token in X-CSRF-Token.
 */
export function originCheck(publicUrl: string) {
  const allowed = new URL(publicUrl).origin
  return async (ctx: Context, next: Next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      const origin = ctx.get('Origin')
      // Not ctx.origin: Koa 3 reads that from the Origin header itself.
      const own = `${ctx.protocol}://${ctx.host}`
      if (origin && origin !== allowed && origin !== own) throw new ApiError('forbidden', 'Cross-site request refused.')
      if (ctx.get('Sec-Fetch-Site') === 'cross-site') throw new ApiError('forbidden', 'Cross-site request refused.')
    }
    await next()
  }
}

export function csrfCheck(ctx: Context, session: SessionData): void {
  if (ctx.method === 'GET' || ctx.method === 'HEAD') return
  const sent = Buffer.from(ctx.get('X-CSRF-Token'))
  const expected = Buffer.from(session.csrf)
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
    throw new ApiError('forbidden', 'Missing or wrong X-CSRF-Token; reload the page.')
  }
}

/**
 * Loads the session (if any) and its person; a disabled person's sessions end at once. The person
 * is read from the API, not the watched cache: a role change or a disabling made a moment ago
 * (on any gateway replica) applies to the very next request. (From the cache, a member made
 * external still saw every key for as long as the watch lagged.) The console's traffic is a
 * person's; the API path does not come through here.
 */
export function loadSession(sessions: SessionStore, people: PeopleStore, insecure: boolean) {
  return async (ctx: Context, next: Next) => {
    const id = readCookie(ctx, SESSION_COOKIE, { insecure })
    if (id) {
      const session = await sessions.touch(id)
      const user = session ? await people.getUser(session.user, true) : undefined
      if (session && user && !user.spec.disabled) {
        csrfCheck(ctx, session)
        ctx.state.console = { user, session, sessionId: id } satisfies ConsoleState
      } else {
        if (session) await sessions.destroy(id)
        clearCookie(ctx, SESSION_COOKIE, { insecure })
      }
    }
    await next()
  }
}

/** A console request's JSON object body: a few KB before sign-in, up to the API's limit after. */
export async function jsonBody(ctx: Context): Promise<Record<string, unknown>> {
  const body = await readJsonBody(ctx, ctx.state.console ? MAX_BODY_BYTES : UNAUTHENTICATED_BODY_BYTES)
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw invalid('The body must be a JSON object.', [{ path: '(root)', message: 'must be an object' }])
  return body as Record<string, unknown>
}

/** Small field readers that collect problems as the API's `details`. */
export class Fields {
  readonly problems: ErrorDetail[] = []
  constructor(private readonly body: Record<string, unknown>) {}

  string(
    name: string,
    opts: { required?: boolean; max?: number; pattern?: RegExp; message?: string } = {},
  ): string | undefined {
    const v = this.body[name]
    if (v === undefined || v === null || v === '') {
      if (opts.required) this.problems.push({ path: name, message: 'is required' })
      return undefined
    }
    if (typeof v !== 'string') return void this.problems.push({ path: name, message: 'must be a string' })
    const t = v.trim()
    if (opts.max && t.length > opts.max)
      return void this.problems.push({ path: name, message: `must be at most ${opts.max} characters` })
    if (opts.pattern && !opts.pattern.test(t))
      return void this.problems.push({ path: name, message: opts.message ?? 'is not valid' })
    return t
  }

  oneOf<T extends string>(name: string, values: readonly T[], opts: { required?: boolean } = {}): T | undefined {
    const v = this.body[name]
    if (v === undefined || v === null) {
      if (opts.required) this.problems.push({ path: name, message: 'is required' })
      return undefined
    }
    if (!values.includes(v as T))
      return void this.problems.push({ path: name, message: `must be one of ${values.join(', ')}` })
    return v as T
  }

  check(): void {
    if (this.problems.length)
      throw invalid(this.problems.map((p) => `${p.path} ${p.message}`).join('; ') + '.', this.problems)
  }
}

/**
 * Before sign-in the console is anyone's: each client address may make `perMinute` console API
 * requests a minute without a session (sign-in, invites, OIDC), counted in Redis across
 * replicas; more answer 429 with Retry-After. Signed-in people are not counted here. While Redis
 * is down requests pass (the sign-in lockout and password-work limits still hold).
 */
export function limitAnonymous(limiter: RateLimiter, perMinute: number) {
  return async (ctx: Context, next: Next) => {
    if (!ctx.state.console) {
      const hit = await limiter.hit(`console-addr:${ctx.ip}`, Date.now(), requestLogFields(ctx))
      if (hit && hit.count > perMinute) {
        const seconds = Math.max(1, Math.ceil(hit.resetMs / 1000))
        throw new ApiError(
          'rate_limited',
          'Too many console requests from this address; try again shortly.',
          undefined,
          { 'Retry-After': String(seconds) },
        )
      }
    }
    await next()
  }
}
