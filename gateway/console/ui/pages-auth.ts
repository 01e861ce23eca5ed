import type { ConsolePublicConfig } from './api-types.js'
import { ApiFailure, call, messageOf, setCsrfToken } from './api.js'
import { errorBox, field, h, loading, notice, replace } from './dom.js'
import { title, type Page } from './page.js'

const OIDC_ERRORS: Record<string, string> = {
  expired: 'The sign-in took too long or was started in another browser. Try again.',
  provider: 'The identity provider did not complete the sign-in. Try again.',
  unreachable: 'The identity provider cannot be reached right now. Try again later, or sign in with your password.',
  unverified: 'Your identity provider account has no verified e-mail address.',
  disabled: 'This account is disabled. Ask an admin.',
  subject: 'This e-mail address is linked to a different identity-provider account.',
  not_allowed: 'Your account is not on an allowed domain and has no open invite. Ask an admin for an invite.',
}

function authCard(heading: string, ...children: HTMLElement[]): HTMLElement {
  return h(
    'div',
    { class: 'auth' },
    h('div', { class: 'auth-card' }, h('p', { class: 'brand' }, 'dutil'), h('h1', {}, heading), children),
  )
}

export async function signInPage(p: Page): Promise<void> {
  title('Sign in')
  const config = await call<ConsolePublicConfig>('GET', '/config').catch(
    () => ({ oidc: { enabled: false } }) as ConsolePublicConfig,
  )
  const status = h('div', { 'aria-live': 'polite' })
  const oidcError = p.query.get('error')
  if (oidcError) status.append(errorBox(OIDC_ERRORS[oidcError] ?? 'The sign-in did not work. Try again.'))
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true })
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true })
  const submit = h('button', { type: 'submit', class: 'button' }, 'Sign in')
  const form = h(
    'form',
    { class: 'stack', novalidate: false },
    field('E-mail', email),
    field('Password', password),
    submit,
  )
  const done = async () => {
    await p.refreshMe()
    p.navigate(p.query.get('next')?.startsWith('/console/') ? p.query.get('next')! : '/console/jobs', true)
  }
  form.addEventListener('submit', async (e) => {
    e.preventDefault()
    submit.disabled = true
    replace(status)
    try {
      const res = await call<{ status: string; csrfToken?: string }>(
        'POST',
        '/session',
        { email: email.value, password: password.value },
        { quiet401: true },
      )
      if (res.status === 'totp_required') return totpStep()
      if (res.csrfToken) setCsrfToken(res.csrfToken)
      await done()
    } catch (err) {
      replace(status, errorBox(messageOf(err)))
      password.value = ''
      password.focus()
    } finally {
      submit.disabled = false
    }
  })
  const totpStep = () => {
    const code = h('input', {
      type: 'text',
      name: 'code',
      inputmode: 'numeric',
      autocomplete: 'one-time-code',
      pattern: '[0-9]{6}',
      maxlength: 6,
      required: true,
    })
    const verify = h('button', { type: 'submit', class: 'button' }, 'Verify')
    const totpStatus = h('div', { 'aria-live': 'polite' })
    const totpForm = h(
      'form',
      { class: 'stack' },
      h('p', {}, 'Enter the 6-digit code from your authenticator app.'),
      field('Authentication code', code),
      verify,
      totpStatus,
    )
    totpForm.addEventListener('submit', async (e) => {
      e.preventDefault()
      verify.disabled = true
      try {
        const res = await call<{ csrfToken?: string }>(
          'POST',
          '/session/totp',
          { code: code.value.trim() },
          { quiet401: true },
        )
        if (res.csrfToken) setCsrfToken(res.csrfToken)
        await done()
      } catch (err) {
        replace(totpStatus, errorBox(messageOf(err)))
        code.value = ''
        code.focus()
        if (err instanceof ApiFailure && /expired/.test(err.message)) setTimeout(() => void signInPage(p), 2500)
      } finally {
        verify.disabled = false
      }
    })
    replace(p.main, authCard('Two-factor authentication', totpForm))
    code.focus()
  }
  const oidc = config.oidc.enabled
    ? h(
        'div',
        { class: 'stack' },
        h('p', { class: 'divider' }, h('span', {}, 'or')),
        h(
          'a',
          { class: 'button secondary', href: '/console/api/oidc/start' },
          `Continue with ${config.oidc.displayName}`,
        ),
      )
    : null
  replace(
    p.main,
    authCard(
      'Sign in to the console',
      status,
      form,
      ...(oidc ? [oidc] : []),
      h('p', { class: 'muted small' }, 'No account yet? Ask an admin for an invite link.'),
    ),
  )
  email.focus()
}

export async function invitePage(p: Page): Promise<void> {
  title('Accept your invite')
  const token = p.params[0] || location.hash.slice(1)
  // Another invite link opened in this tab changes only the fragment: read it afresh.
  window.addEventListener('hashchange', () => location.reload(), { once: true })
  replace(p.main, authCard('Accept your invite', loading('the invite')))
  let invite: { email: string; role: string; expiresAt: string; oidc: boolean }
  try {
    invite = await call('POST', '/invites/lookup', { token }, { quiet401: true })
  } catch (err) {
    replace(
      p.main,
      authCard(
        'This invite cannot be used',
        errorBox(messageOf(err)),
        h('a', { class: 'button secondary', href: '/console/sign-in' }, 'Go to sign-in'),
      ),
    )
    return
  }
  const name = h('input', { type: 'text', autocomplete: 'name', required: true, maxlength: 200 })
  const password = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: 10 })
  const confirm = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: 10 })
  const status = h('div', { 'aria-live': 'polite' })
  const submit = h('button', { type: 'submit', class: 'button' }, 'Create my account')
  const form = h(
    'form',
    { class: 'stack' },
    h('input', { type: 'email', autocomplete: 'username', value: invite.email, hidden: true, readonly: true }),
    field('Your name', name),
    field('Password', password, 'At least 10 characters. A passphrase of a few words works well.'),
    field('Repeat the password', confirm),
    status,
    submit,
  )
  form.addEventListener('submit', async (e) => {
    e.preventDefault()
    replace(status)
    if (password.value !== confirm.value) return replace(status, errorBox('The two passwords are not the same.'))
    submit.disabled = true
    try {
      const res = await call<{ csrfToken: string }>(
        'POST',
        '/invites/accept',
        { token, name: name.value, password: password.value },
        { quiet401: true },
      )
      setCsrfToken(res.csrfToken)
      await p.refreshMe()
      p.navigate('/console/jobs', true)
    } catch (err) {
      replace(status, errorBox(messageOf(err)))
    } finally {
      submit.disabled = false
    }
  })
  replace(
    p.main,
    authCard(
      'Accept your invite',
      notice(
        h(
          'span',
          {},
          'You are invited as ',
          h('strong', {}, invite.role),
          ' with ',
          h('strong', { 'data-testid': 'invite-email' }, invite.email),
          '.',
        ),
      ),
      form,
      ...(invite.oidc
        ? [
            h(
              'div',
              { class: 'stack' },
              h('p', { class: 'divider' }, h('span', {}, 'or')),
              h(
                'a',
                { class: 'button secondary', href: '/console/api/oidc/start' },
                'Continue with the identity provider',
              ),
              h('p', { class: 'hint' }, `Sign in there as ${invite.email}; the invite decides your role.`),
            ),
          ]
        : []),
    ),
  )
  name.focus()
}
