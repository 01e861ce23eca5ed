import Router from '@koa/router'
import type { Context } from 'koa'
import {
  EMAIL_PATTERN,
  normalizeEmail,
  type ConsoleUserResource,
  type Role,
} from '../../../contract/console-resources.js'
import { apiStatus } from '../../../platform/kube.js'
import { ApiError, invalid } from '../../api-error.js'
import {
  clearCookie,
  Fields,
  jsonBody,
  OIDC_COOKIE,
  PENDING_COOKIE,
  readCookie,
  sessionCookie,
  SESSION_COOKIE,
  setCookie,
  signedIn,
  type ConsoleState,
} from '../http.js'
import { burnVerification, hashPassword, needsRehash, passwordProblem, verifyPassword } from '../passwords.js'
import { permissionsOf } from '../permissions.js'
import type { SessionData } from '../sessions.js'
import type { Credentials } from '../../../platform/people-store.js'
import { matchTotp } from '../totp.js'
import type { ConsoleDeps } from './deps.js'
import type { ConsolePublicConfig, Me } from '../ui/api-types.js'

const OIDC_FLOW_MS = 10 * 60_000

export function meView(s: ConsoleState, hasPassword?: boolean): Me {
  const u = s.user.spec
  return {
    user: {
      id: u.userId,
      email: u.email,
      name: u.name,
      role: u.role,
      totpEnabled: u.totpEnabled,
      signInMethod: s.session.method,
      ...(hasPassword === undefined ? {} : { hasPassword }),
    },
    csrfToken: s.session.csrf,
    permissions: permissionsOf(u.role),
  }
}

/** Starts a fresh session (a new id at every sign-in; any earlier one of this browser ends). */
export async function startSession(
  ctx: Context,
  d: ConsoleDeps,
  user: ConsoleUserResource,
  method: SessionData['method'],
): Promise<ConsoleState> {
  const previous = readCookie(ctx, SESSION_COOKIE, { insecure: d.config.insecureCookies })
  if (previous) await d.sessions.destroy(previous)
  const { id, data } = await d.sessions.create(user.metadata.name, method)
  sessionCookie(ctx, id, d.config.insecureCookies)
  d.people
    .recordSignIn(user.metadata.name)
    .catch((err) => d.log.warn({ err: (err as Error).message }, 'recording the sign-in failed'))
  d.log.info({ userId: user.spec.userId, method }, 'console sign-in')
  return { user, session: data, sessionId: id }
}

const badCredentials = () => new ApiError('unauthorized', 'The e-mail or password is not right.')
export const lockedError = (ms: number) =>
  new ApiError(
    'rate_limited',
    `Too many failed sign-ins for this e-mail: try again in ${Math.ceil(ms / 60_000)} minutes.`,
    undefined,
    { 'Retry-After': String(Math.ceil(ms / 1000)) },
  )

export function authRoutes(d: ConsoleDeps): Router {
  const r = new Router({ prefix: '/console/api' })
  const insecure = d.config.insecureCookies

  r.get('/config', (ctx) => {
    ctx.body = {
      oidc: d.oidc ? { enabled: true, displayName: d.config.oidc!.displayName } : { enabled: false },
    } satisfies ConsolePublicConfig
  })

  r.get('/session', async (ctx) => {
    const s = signedIn(ctx)
    const creds = await d.people.readCredentials(s.user)
    ctx.body = meView(s, creds.passwordHash !== null)
  })

  // Password sign-in: step one. With TOTP on, answers totp_required and a pending cookie.
  r.post('/session', async (ctx) => {
    const f = new Fields(await jsonBody(ctx))
    const email = f.string('email', { required: true, max: 320 })
    const password = f.string('password', { required: true, max: 200 })
    f.check()
    const addr = normalizeEmail(email!)
    const found: { user?: ConsoleUserResource; creds?: Credentials } = {}
    const outcome = await d.lockout.check(addr, ctx.ip, async () => {
      const user = await d.people.findUserByEmail(addr, true)
      const creds = user ? await d.people.readCredentials(user) : undefined
      // An account bound to the identity provider signs in there only when its passwords are off.
      const passwordsOff = Boolean(user?.spec.oidcSubject) && d.config.oidc?.accountPasswords === false
      if (!user || user.spec.disabled || !creds?.passwordHash || passwordsOff)
        return (await burnVerification(password!), false)
      Object.assign(found, { user, creds })
      return verifyPassword(creds.passwordHash, password!)
    })
    if (typeof outcome === 'object') throw lockedError(outcome.lockedForMs)
    const { user, creds } = found
    if (outcome === 'wrong' || !user || !creds) throw badCredentials()
    if (needsRehash(creds.passwordHash!))
      await d.people.writeCredentials(user, { ...creds, passwordHash: await hashPassword(password!) })
    if (user.spec.totpEnabled) {
      const pending = await d.sessions.createPending(user.metadata.name)
      setCookie(ctx, PENDING_COOKIE, pending, { insecure, path: '/console/api/session', maxAgeMs: 5 * 60_000 })
      ctx.body = { status: 'totp_required' }
      return
    }
    const s = await startSession(ctx, d, user, 'password')
    ctx.body = { status: 'signed_in', ...meView(s) }
  })

  // Step two: the 6-digit code. Wrong codes count as failed sign-ins; a used code is refused.
  r.post('/session/totp', async (ctx) => {
    const f = new Fields(await jsonBody(ctx))
    const code = f.string('code', {
      required: true,
      pattern: /^\d{6}$/,
      message: 'must be the 6-digit code from your authenticator app',
    })
    f.check()
    const pendingId = readCookie(ctx, PENDING_COOKIE, { insecure, path: '/console/api/session' })
    const name = pendingId ? await d.sessions.readPending(pendingId) : null
    const user = name ? await d.people.getUser(name, true) : undefined
    if (!pendingId || !user || user.spec.disabled)
      throw new ApiError('unauthorized', 'The sign-in has expired: enter your e-mail and password again.')
    const { totpSecret } = await d.people.readCredentials(user)
    const checked: { step?: number | null } = {}
    const outcome = await d.lockout.check(user.spec.email, ctx.ip, async () => {
      checked.step = totpSecret ? matchTotp(totpSecret, code!, Date.now()) : null
      return checked.step !== null && (await d.sessions.claimTotpStep(user.metadata.name, checked.step))
    })
    if (typeof outcome === 'object') throw lockedError(outcome.lockedForMs)
    if (outcome === 'wrong')
      throw new ApiError(
        'unauthorized',
        checked.step === null
          ? 'That code is not right; codes change every 30 seconds.'
          : 'That code was already used; wait for the next one.',
      )
    await d.sessions.dropPending(pendingId)
    clearCookie(ctx, PENDING_COOKIE, { insecure, path: '/console/api/session' })
    const s = await startSession(ctx, d, user, 'password')
    ctx.body = { status: 'signed_in', ...meView(s) }
  })

  r.delete('/session', async (ctx) => {
    const id = readCookie(ctx, SESSION_COOKIE, { insecure })
    if (id) await d.sessions.destroy(id)
    clearCookie(ctx, SESSION_COOKIE, { insecure })
    ctx.status = 204
  })

  r.post('/session/sign-out-everywhere', async (ctx) => {
    const s = signedIn(ctx)
    const ended = await d.sessions.destroyAll(s.user.metadata.name)
    clearCookie(ctx, SESSION_COOKIE, { insecure })
    ctx.body = { ended }
  })

  // Invites: what the link is for, and accepting it with a name and password. The token travels
  // in the link's fragment and in these POST bodies, never in a path: nothing on the way (an
  // ingress's access log, a trace) records it.
  r.post('/invites/lookup', async (ctx) => {
    const f = new Fields(await jsonBody(ctx))
    const token = f.string('token', { required: true, max: 200 })
    f.check()
    const invite = await d.people.findInvite(token!)
    if (!invite)
      throw new ApiError(
        'not_found',
        'This invite link is not valid any more: it was used, replaced by a newer invite, or it expired. Ask an admin for a new one.',
      )
    ctx.body = {
      email: invite.spec.email,
      role: invite.spec.role,
      expiresAt: invite.spec.expiresAt,
      oidc: d.oidc !== null,
    }
  })

  r.post('/invites/accept', async (ctx) => {
    const body = await jsonBody(ctx)
    const f = new Fields(body)
    const token = f.string('token', { required: true, max: 200 })
    const name = f.string('name', { required: true, max: 200 })
    const problem = passwordProblem(body.password)
    if (problem) f.problems.push({ path: 'password', message: problem })
    f.check()
    const invite = await d.people.findInvite(token!)
    if (!invite) throw new ApiError('not_found', 'This invite link is not valid any more. Ask an admin for a new one.')
    const passwordHash = await hashPassword(body.password as string)
    if (await d.people.findUserByEmail(invite.spec.email))
      throw new ApiError('conflict', 'An account with this e-mail already exists: sign in instead.')
    // Deleting the invite (only if unchanged) is what makes the link single-use.
    if (!(await d.people.deleteInvite(invite)))
      throw new ApiError('not_found', 'This invite link is not valid any more. Ask an admin for a new one.')
    let user: ConsoleUserResource
    try {
      user = await d.people.createUser({ email: invite.spec.email, name: name!, role: invite.spec.role, passwordHash })
    } catch (err) {
      if (apiStatus(err) === 409)
        throw new ApiError('conflict', 'An account with this e-mail already exists: sign in instead.')
      throw err
    }
    const s = await startSession(ctx, d, user, 'invite')
    ctx.status = 201
    ctx.body = { status: 'signed_in', ...meView(s) }
  })

  // OpenID Connect: authorization code flow with PKCE, state bound to this browser by a cookie.
  r.get('/oidc/start', async (ctx) => {
    if (!d.oidc) throw new ApiError('not_found', 'Identity-provider sign-in is not set up.')
    let flow
    try {
      flow = await d.oidc.start()
    } catch (err) {
      d.log.warn({ err: (err as Error).message }, 'the identity provider cannot be reached')
      return ctx.redirect('/console/sign-in?error=unreachable')
    }
    await d.sessions.putTemp('oidc', flow.state, flow, OIDC_FLOW_MS)
    setCookie(ctx, OIDC_COOKIE, flow.state, { insecure, path: '/console/api/oidc', maxAgeMs: OIDC_FLOW_MS })
    ctx.redirect(flow.url)
  })

  r.get('/oidc/callback', async (ctx) => {
    const fail = (reason: string) => {
      d.log.info({ reason }, 'identity-provider sign-in refused')
      ctx.redirect(`/console/sign-in?error=${encodeURIComponent(reason)}`)
    }
    if (!d.oidc) throw new ApiError('not_found', 'Identity-provider sign-in is not set up.')
    const state = readCookie(ctx, OIDC_COOKIE, { insecure, path: '/console/api/oidc' })
    clearCookie(ctx, OIDC_COOKIE, { insecure, path: '/console/api/oidc' })
    const flow = state
      ? await d.sessions.takeTemp<{ state: string; verifier: string; nonce: string }>('oidc', state)
      : null
    if (!flow || ctx.query.state !== flow.state) return fail('expired')
    if (typeof ctx.query.error === 'string') return fail('provider')
    let identity
    try {
      identity = await d.oidc.finish(new URL(ctx.originalUrl, d.config.publicUrl), flow)
    } catch (err) {
      d.log.warn({ err: (err as Error).message }, 'OIDC code exchange failed')
      return fail('provider')
    }
    if (!identity.email || !identity.emailVerified) return fail('unverified')
    const email = normalizeEmail(identity.email)
    let user = await d.people.findUserByEmail(email, true)
    if (user) {
      if (user.spec.disabled) return fail('disabled')
      if (user.spec.oidcSubject && user.spec.oidcSubject !== identity.subject) return fail('subject')
      if (!user.spec.oidcSubject) user = await d.people.patchUser(user.metadata.name, { oidcSubject: identity.subject })
    } else {
      const invite = (await d.people.listInvites()).find(
        (i) => i.spec.email === email && Date.parse(i.spec.expiresAt) > Date.now(),
      )
      const domain = email.split('@')[1]
      let role: Role | undefined
      if (invite && (await d.people.deleteInvite(invite))) role = invite.spec.role
      else if (d.config.oidc!.allowedDomains.includes(domain)) role = 'member'
      if (!role) return fail('not_allowed')
      try {
        user = await d.people.createUser({
          email,
          name: identity.name || email.split('@')[0],
          role,
          oidcSubject: identity.subject,
        })
      } catch (err) {
        if (apiStatus(err) !== 409) throw err
        user = (await d.people.findUserByEmail(email))!
      }
    }
    await startSession(ctx, d, user, 'oidc')
    ctx.redirect('/console/')
  })

  return r
}

export function assertEmail(email: string | undefined): string {
  if (!email || !EMAIL_PATTERN.test(email))
    throw invalid('email is not a valid e-mail address.', [{ path: 'email', message: 'is not a valid e-mail address' }])
  return normalizeEmail(email)
}
