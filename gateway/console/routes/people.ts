import Router from '@koa/router'
import QRCode from 'qrcode'
import { ROLES, type ConsoleUserResource, type Role } from '../../../contract/console-resources.js'
import { apiStatus } from '../../../platform/kube.js'
import { ApiError } from '../../api-error.js'
import { authorize, Fields, jsonBody, signedIn } from '../http.js'
import { hashPassword, passwordProblem, verifyPassword } from '../passwords.js'
import { lastAdminProblem } from '../permissions.js'
import { matchTotp, newTotpSecret, otpauthUri } from '../totp.js'
import { assertEmail, lockedError } from './auth.js'
import type { ConsoleDeps } from './deps.js'
import type { Invite, Member } from '../ui/api-types.js'
import type { SessionData } from '../sessions.js'

const TOTP_ENROL_MS = 10 * 60_000

export function inviteLink(d: ConsoleDeps, token: string): string {
  return `${d.config.publicUrl}/console/invite#${token}`
}

function personView(u: ConsoleUserResource): Member {
  return {
    id: u.spec.userId,
    email: u.spec.email,
    name: u.spec.name,
    role: u.spec.role,
    disabled: u.spec.disabled,
    totpEnabled: u.spec.totpEnabled,
    identityProvider: Boolean(u.spec.oidcSubject),
    createdAt: u.spec.createdAt,
    lastSignInAt: u.status?.lastSignInAt ?? null,
  }
}

/** How recent a sign-in with the identity provider must be to set an account's first password. */
export const FRESH_SIGN_IN_MS = 5 * 60_000

/** Whether a session began with the identity provider within FRESH_SIGN_IN_MS. */
export function freshProviderSignIn(session: Pick<SessionData, 'method' | 'createdAt'>, now: number): boolean {
  return session.method === 'oidc' && now - session.createdAt <= FRESH_SIGN_IN_MS
}

/** Members (admins only) and the signed-in person's own account (2FA, password). */
export function peopleRoutes(d: ConsoleDeps): Router {
  const r = new Router({ prefix: '/console/api' })

  r.get('/members', async (ctx) => {
    authorize(ctx, 'members.read')
    // The admin's own changes (an invite, a role, a person disabled) show on the page they reload
    // right after: read from the API, not the watched cache, which may lag behind.
    const users = (await d.people.listUsersFresh()).sort((a, b) => a.spec.email.localeCompare(b.spec.email))
    const invites = (await d.people.listInvitesFresh())
      .filter((i) => Date.parse(i.spec.expiresAt) > Date.now())
      .sort((a, b) => b.spec.createdAt.localeCompare(a.spec.createdAt))
    ctx.body = {
      members: users.map(personView),
      invites: invites.map((i): Invite => ({
        id: i.spec.inviteId,
        email: i.spec.email,
        role: i.spec.role,
        createdAt: i.spec.createdAt,
        expiresAt: i.spec.expiresAt,
        invitedBy: i.spec.invitedBy,
      })),
    }
  })

  r.post('/members/invites', async (ctx) => {
    const s = authorize(ctx, 'members.manage')
    const f = new Fields(await jsonBody(ctx))
    const email = f.string('email', { required: true, max: 320 })
    const role = f.oneOf('role', ROLES, { required: true })
    f.check()
    const address = assertEmail(email)
    if (await d.people.findUserByEmail(address)) throw new ApiError('conflict', `${address} already has an account.`)
    const { invite, token } = await d.people.invite({ email: address, role: role!, invitedBy: s.user.spec.email })
    d.log.info({ inviteId: invite.spec.inviteId, role, by: s.user.spec.userId }, 'invite issued')
    ctx.status = 201
    ctx.body = {
      id: invite.spec.inviteId,
      email: address,
      role,
      expiresAt: invite.spec.expiresAt,
      link: inviteLink(d, token),
    }
  })

  r.delete('/members/invites/:id', async (ctx) => {
    authorize(ctx, 'members.manage')
    if (!(await d.people.deleteInviteById(ctx.params.id))) throw new ApiError('not_found', 'No such open invite.')
    ctx.status = 204
  })

  r.patch('/members/:id', async (ctx) => {
    const s = authorize(ctx, 'members.manage')
    const body = await jsonBody(ctx)
    const f = new Fields(body)
    const role = f.oneOf('role', ROLES)
    if (body.disabled !== undefined && typeof body.disabled !== 'boolean')
      f.problems.push({ path: 'disabled', message: 'must be true or false' })
    f.check()
    const disabled = body.disabled as boolean | undefined
    // Member changes run one at a time across replicas (a Redis mutex), each reading the people
    // fresh, checking the last-admin rule and writing with that resourceVersion: two admins
    // demoting each other at once cannot both pass a check made before the other's write.
    // A concurrent non-member change (a sign-in being recorded) makes the write conflict: done again.
    let updated: ConsoleUserResource | undefined
    let target: ConsoleUserResource | undefined
    await d.mutex.with('console:mutex:members', async () => {
      for (let attempt = 0; attempt < 4 && !updated; attempt++) {
        const users = await d.people.listUsersFresh()
        target = users.find((u) => u.spec.userId === ctx.params.id)
        if (!target) throw new ApiError('not_found', 'No such member.')
        const problem = lastAdminProblem(
          users.map((u) => ({ id: u.spec.userId, role: u.spec.role, disabled: u.spec.disabled })),
          target.spec.userId,
          { role: role as Role | undefined, disabled },
        )
        if (problem) throw new ApiError('conflict', problem)
        try {
          updated = await d.people.patchUser(
            target.metadata.name,
            { ...(role ? { role } : {}), ...(disabled !== undefined ? { disabled } : {}) },
            target.metadata.resourceVersion,
          )
        } catch (err) {
          if (apiStatus(err) !== 409) throw err
        }
      }
    })
    if (!updated || !target)
      throw new ApiError('conflict', 'Someone changed this member at the same time; reload and try again.')
    if (disabled) await d.sessions.destroyAll(target.metadata.name)
    d.log.info({ target: target.spec.userId, role, disabled, by: s.user.spec.userId }, 'member changed')
    ctx.body = personView(updated)
  })

  r.post('/members/:id/reset-2fa', async (ctx) => {
    const s = authorize(ctx, 'members.manage')
    const target = await d.people.findUserById(ctx.params.id)
    if (!target) throw new ApiError('not_found', 'No such member.')
    const creds = await d.people.readCredentials(target)
    await d.people.writeCredentials(target, { ...creds, totpSecret: null })
    const updated = await d.people.patchUser(target.metadata.name, { totpEnabled: false })
    d.log.info({ target: target.spec.userId, by: s.user.spec.userId }, 'two-factor reset')
    ctx.body = personView(updated)
  })

  // Own account: TOTP enrolment (secret shown with a QR code, confirmed by a first code).
  r.post('/account/totp/setup', async (ctx) => {
    const s = signedIn(ctx)
    const creds = await d.people.readCredentials(s.user)
    if (!creds.passwordHash)
      throw new ApiError(
        'conflict',
        "Two-factor codes protect password sign-in; identity-provider accounts use the provider's own second factor.",
      )
    if (s.user.spec.totpEnabled) throw new ApiError('conflict', 'Two-factor authentication is already on.')
    const secret = newTotpSecret()
    await d.sessions.putTemp('totp-enrol', s.user.metadata.name, { secret }, TOTP_ENROL_MS)
    const uri = otpauthUri(secret, s.user.spec.email)
    ctx.set('Cache-Control', 'no-store')
    ctx.body = {
      secret,
      otpauthUri: uri,
      qrSvg: await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }),
    }
  })

  r.post('/account/totp/confirm', async (ctx) => {
    const s = signedIn(ctx)
    const f = new Fields(await jsonBody(ctx))
    const code = f.string('code', {
      required: true,
      pattern: /^\d{6}$/,
      message: 'must be the 6-digit code from your authenticator app',
    })
    f.check()
    const pending = await d.sessions.takeTemp<{ secret: string }>('totp-enrol', s.user.metadata.name, false)
    if (!pending) throw new ApiError('conflict', 'The setup expired; start again.')
    const step = matchTotp(pending.secret, code!, Date.now())
    if (step === null || !(await d.sessions.claimTotpStep(s.user.metadata.name, step)))
      throw new ApiError(
        'invalid_request',
        'That code is not right; check the time on your phone and try the next code.',
        [{ path: 'code', message: 'does not match' }],
      )
    await d.sessions.takeTemp('totp-enrol', s.user.metadata.name)
    const creds = await d.people.readCredentials(s.user)
    await d.people.writeCredentials(s.user, { ...creds, totpSecret: pending.secret })
    await d.people.patchUser(s.user.metadata.name, { totpEnabled: true })
    ctx.body = { totpEnabled: true }
  })

  // Turning it off takes a current code (a stolen session alone cannot remove the second factor).
  r.post('/account/totp/disable', async (ctx) => {
    const s = signedIn(ctx)
    const f = new Fields(await jsonBody(ctx))
    const code = f.string('code', {
      required: true,
      pattern: /^\d{6}$/,
      message: 'must be the 6-digit code from your authenticator app',
    })
    f.check()
    if (!s.user.spec.totpEnabled) throw new ApiError('conflict', 'Two-factor authentication is already off.')
    const creds = await d.people.readCredentials(s.user)
    // Counted with the sign-in lockout: a stolen session cannot guess its way past the second factor.
    const outcome = await d.lockout.check(s.user.spec.email, ctx.ip, async () => {
      const step = creds.totpSecret ? matchTotp(creds.totpSecret, code!, Date.now()) : null
      return step !== null && (await d.sessions.claimTotpStep(s.user.metadata.name, step))
    })
    if (typeof outcome === 'object') throw lockedError(outcome.lockedForMs)
    if (outcome === 'wrong')
      throw new ApiError('invalid_request', 'That code is not right.', [{ path: 'code', message: 'does not match' }])
    await d.people.writeCredentials(s.user, { ...creds, totpSecret: null })
    await d.people.patchUser(s.user.metadata.name, { totpEnabled: false })
    ctx.body = { totpEnabled: false }
  })

  r.post('/account/password', async (ctx) => {
    const s = signedIn(ctx)
    const body = await jsonBody(ctx)
    const f = new Fields(body)
    const problem = passwordProblem(body.newPassword)
    if (problem) f.problems.push({ path: 'newPassword', message: problem })
    f.check()
    if (s.user.spec.oidcSubject && d.config.oidc?.accountPasswords === false)
      throw new ApiError(
        'forbidden',
        `Accounts that sign in with ${d.config.oidc.displayName} have no password in this workspace.`,
      )
    const creds = await d.people.readCredentials(s.user)
    // The first password of an account made through the identity provider: only right after a
    // sign-in there, so a session taken from someone cannot add a way in that outlives it.
    if (!creds.passwordHash && !freshProviderSignIn(s.session, Date.now()))
      throw new ApiError(
        'forbidden',
        `To set a first password, sign in with ${d.config.oidc?.displayName ?? 'your identity provider'} again and set it within 5 minutes.`,
      )
    if (creds.passwordHash) {
      const hash = creds.passwordHash
      const outcome = await d.lockout.check(
        s.user.spec.email,
        ctx.ip,
        async () => typeof body.currentPassword === 'string' && (await verifyPassword(hash, body.currentPassword)),
      )
      if (typeof outcome === 'object') throw lockedError(outcome.lockedForMs)
      if (outcome === 'wrong')
        throw new ApiError('invalid_request', 'The current password is not right.', [
          { path: 'currentPassword', message: 'is not right' },
        ])
    }
    await d.people.writeCredentials(s.user, { ...creds, passwordHash: await hashPassword(body.newPassword as string) })
    ctx.status = 204
  })
  return r
}
