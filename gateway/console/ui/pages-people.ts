import type { Invite, Member } from './api-types.js'
import { call, messageOf } from './api.js'
import { badge, confirmDialog, empty, errorBox, field, h, loading, notice, replace, secretValue, table } from './dom.js'
import { ago, when } from './format.js'
import { title, type Page } from './page.js'

const ROLE_HELP =
  'Admins manage everything and everyone. Members see and manage all keys, jobs and usage. Externals see only their own keys, jobs and usage.'

export async function membersPage(p: Page): Promise<void> {
  title('Members')
  const status = h('div', { 'aria-live': 'polite' })
  const email = h('input', { type: 'email', required: true, autocomplete: 'off', placeholder: 'name@example.com' })
  const role = h(
    'select',
    {},
    h('option', { value: 'member' }, 'Member'),
    h('option', { value: 'external' }, 'External (guest)'),
    h('option', { value: 'admin' }, 'Admin'),
  )
  const inviteForm = h(
    'form',
    { class: 'inline-form', 'aria-label': 'Invite someone' },
    field('E-mail', email),
    field('Role', role),
    h('button', { type: 'submit', class: 'button' }, 'Create invite link'),
  )
  const body = h('div', {}, loading('members'))
  replace(
    p.main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Members'), h('p', { class: 'muted' }, ROLE_HELP)),
    h(
      'section',
      { class: 'card', 'aria-label': 'Invite' },
      h('h2', {}, 'Invite someone'),
      h(
        'p',
        { class: 'muted' },
        'No e-mail is sent: give the person the link. It works once and for 7 days; inviting the same address again replaces it.',
      ),
      inviteForm,
    ),
    status,
    body,
  )
  inviteForm.addEventListener('submit', async (e) => {
    e.preventDefault()
    try {
      const res = await call<{ link: string; email: string; role: string; expiresAt: string }>(
        'POST',
        '/members/invites',
        { email: email.value, role: role.value },
      )
      replace(
        status,
        h(
          'div',
          { class: 'alert alert-success', role: 'status' },
          h('p', {}, `Invite for ${res.email} (${res.role}), valid until ${when(res.expiresAt)}:`),
          secretValue('Invite link', res.link, 'invite-link'),
        ),
      )
      email.value = ''
      await load()
    } catch (err) {
      replace(status, errorBox(messageOf(err)))
    }
  })
  const change = async (m: Member, patch: { role?: string; disabled?: boolean }, done: string) => {
    try {
      await call('PATCH', `/members/${m.id}`, patch)
      replace(status, notice(done, 'success'))
    } catch (err) {
      replace(status, errorBox(messageOf(err)))
    }
    await load()
  }
  const load = async () => {
    let data: { members: Member[]; invites: Invite[] }
    try {
      data = await call('GET', '/members')
    } catch (err) {
      replace(
        body,
        errorBox(messageOf(err), () => void load()),
      )
      return
    }
    const memberRows = data.members.map((m) => {
      const roleSelect = h(
        'select',
        { 'aria-label': `Role of ${m.email}` },
        ['admin', 'member', 'external'].map((r) => h('option', { value: r, selected: r === m.role }, r)),
      )
      roleSelect.addEventListener(
        'change',
        () => void change(m, { role: roleSelect.value }, `${m.email} is now ${roleSelect.value}.`),
      )
      const self = m.id === p.me?.user.id
      return [
        h(
          'span',
          {},
          h('strong', {}, m.name),
          self ? ' (you)' : '',
          h('br'),
          h('span', { class: 'muted small' }, m.email),
        ),
        roleSelect,
        m.disabled ? badge('disabled', 'muted') : badge('active', 'ok'),
        m.identityProvider ? 'Identity provider' : 'Password',
        m.totpEnabled ? badge('2FA on', 'ok') : badge('2FA off', 'muted'),
        h('span', { title: when(m.lastSignInAt) }, ago(m.lastSignInAt)),
        h(
          'div',
          { class: 'row-actions' },
          h(
            'button',
            {
              type: 'button',
              class: m.disabled ? 'button secondary small' : 'button danger small',
              'aria-label': `${m.disabled ? 'Enable' : 'Disable'} ${m.email}`,
              onclick: async () => {
                if (
                  !m.disabled &&
                  !(await confirmDialog(
                    `Disable ${m.email}?`,
                    'They are signed out at once and cannot sign in until enabled again. Their keys keep working; revoke them separately.',
                    'Disable',
                  ))
                )
                  return
                await change(m, { disabled: !m.disabled }, `${m.email} is ${m.disabled ? 'enabled' : 'disabled'}.`)
              },
            },
            m.disabled ? 'Enable' : 'Disable',
          ),
          m.totpEnabled
            ? h(
                'button',
                {
                  type: 'button',
                  class: 'button secondary small',
                  'aria-label': `Reset two-factor of ${m.email}`,
                  onclick: async () => {
                    if (
                      !(await confirmDialog(
                        `Reset two-factor authentication of ${m.email}?`,
                        'They sign in with their password alone until they set up a new authenticator.',
                        'Reset 2FA',
                      ))
                    )
                      return
                    try {
                      await call('POST', `/members/${m.id}/reset-2fa`)
                      replace(status, notice(`Two-factor authentication of ${m.email} was reset.`, 'success'))
                    } catch (err) {
                      replace(status, errorBox(messageOf(err)))
                    }
                    await load()
                  },
                },
                'Reset 2FA',
              )
            : null,
        ),
      ]
    })
    replace(
      body,
      h(
        'section',
        { 'aria-labelledby': 'people' },
        h('h2', { id: 'people' }, `People (${data.members.length})`),
        table(
          'People',
          ['Person', 'Role', 'Status', 'Signs in with', 'Two-factor', 'Last sign-in', 'Actions'],
          memberRows,
          { captionHidden: true, testId: 'members-table' },
        ),
      ),
      h(
        'section',
        { 'aria-labelledby': 'open-invites' },
        h('h2', { id: 'open-invites' }, 'Open invites'),
        data.invites.length
          ? table(
              'Open invites',
              ['E-mail', 'Role', 'Invited by', 'Expires', ''],
              data.invites.map((i) => [
                i.email,
                i.role,
                i.invitedBy,
                when(i.expiresAt),
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'button secondary small',
                    'aria-label': `Revoke the invite of ${i.email}`,
                    onclick: async () => {
                      try {
                        await call('DELETE', `/members/invites/${i.id}`)
                        replace(status, notice(`The invite of ${i.email} is revoked.`, 'success'))
                      } catch (err) {
                        replace(status, errorBox(messageOf(err)))
                      }
                      await load()
                    },
                  },
                  'Revoke',
                ),
              ]),
              { captionHidden: true, testId: 'invites-table' },
            )
          : empty('No open invites', 'Invites you create appear here until they are used or expire.'),
      ),
    )
  }
  await load()
}

export async function accountPage(p: Page): Promise<void> {
  title('Account')
  const me = p.me!
  const status = h('div', { 'aria-live': 'polite' })
  const twoFactor = h('div')
  const renderTwoFactor = () => {
    if (me.user.totpEnabled) {
      const code = h('input', {
        type: 'text',
        inputmode: 'numeric',
        autocomplete: 'one-time-code',
        maxlength: 6,
        pattern: '[0-9]{6}',
        required: true,
      })
      const err = h('div', { 'aria-live': 'polite' })
      const off = h(
        'form',
        { class: 'stack' },
        field('Current code, to turn it off', code),
        err,
        h('button', { type: 'submit', class: 'button danger' }, 'Turn off'),
      )
      off.addEventListener('submit', async (e) => {
        e.preventDefault()
        try {
          await call('POST', '/account/totp/disable', { code: code.value.trim() })
          await p.refreshMe()
          me.user.totpEnabled = false
          replace(status, notice('Two-factor authentication is off.', 'success'))
          renderTwoFactor()
        } catch (e2) {
          replace(err, errorBox(messageOf(e2)))
        }
      })
      replace(
        twoFactor,
        h(
          'p',
          {},
          badge('On', 'ok'),
          ' Every password sign-in asks for a code from your authenticator app. If you lose it, ask an admin to reset it.',
        ),
        off,
      )
      return
    }
    if (me.user.hasPassword === false) {
      replace(
        twoFactor,
        h('p', { class: 'muted' }, 'You sign in with the identity provider, which handles your second factor.'),
      )
      return
    }
    replace(
      twoFactor,
      h('p', {}, badge('Off', 'muted'), ' Add a 6-digit code from an authenticator app to every password sign-in.'),
      h('button', { type: 'button', class: 'button', onclick: () => void setup() }, 'Set up two-factor authentication'),
    )
  }
  const setup = async () => {
    let s: { secret: string; otpauthUri: string; qrSvg: string }
    try {
      s = await call('POST', '/account/totp/setup')
    } catch (err) {
      replace(status, errorBox(messageOf(err)))
      return
    }
    const code = h('input', {
      type: 'text',
      inputmode: 'numeric',
      autocomplete: 'one-time-code',
      maxlength: 6,
      pattern: '[0-9]{6}',
      required: true,
    })
    const err = h('div', { 'aria-live': 'polite' })
    const form = h(
      'form',
      { class: 'stack' },
      field('Code from the app', code),
      err,
      h('button', { type: 'submit', class: 'button' }, 'Turn on'),
    )
    form.addEventListener('submit', async (e) => {
      e.preventDefault()
      try {
        await call('POST', '/account/totp/confirm', { code: code.value.trim() })
        await p.refreshMe()
        me.user.totpEnabled = true
        replace(status, notice('Two-factor authentication is on.', 'success'))
        renderTwoFactor()
      } catch (e2) {
        replace(err, errorBox(messageOf(e2)))
      }
    })
    replace(
      twoFactor,
      h(
        'ol',
        { class: 'steps' },
        h(
          'li',
          {},
          'Scan this code with your authenticator app:',
          h('img', {
            src: `data:image/svg+xml;base64,${btoa(s.qrSvg)}`,
            alt: 'QR code of your two-factor secret',
            width: 180,
            height: 180,
            class: 'qr',
          }),
        ),
        h('li', {}, 'Or type this secret into the app: ', h('code', { 'data-testid': 'totp-secret' }, s.secret)),
        h('li', {}, 'Enter the code the app shows:', form),
      ),
    )
    code.focus()
  }
  const current = h('input', { type: 'password', autocomplete: 'current-password' })
  const next = h('input', { type: 'password', autocomplete: 'new-password', minlength: 10, required: true })
  const pwForm = h(
    'form',
    { class: 'stack narrow' },
    me.user.hasPassword ? field('Current password', current) : null,
    field('New password', next, 'At least 10 characters.'),
    h(
      'button',
      { type: 'submit', class: 'button secondary' },
      me.user.hasPassword ? 'Change password' : 'Set a password',
    ),
  )
  pwForm.addEventListener('submit', async (e) => {
    e.preventDefault()
    try {
      await call('POST', '/account/password', { currentPassword: current.value, newPassword: next.value })
      current.value = next.value = ''
      replace(status, notice('Your password was changed.', 'success'))
    } catch (err) {
      replace(status, errorBox(messageOf(err)))
    }
  })
  replace(
    p.main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Account')),
    status,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'profile' },
      h('h2', { id: 'profile' }, 'Profile'),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Name'),
        h('dd', {}, me.user.name),
        h('dt', {}, 'E-mail'),
        h('dd', {}, me.user.email),
        h('dt', {}, 'Role'),
        h('dd', {}, me.user.role),
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'tfa' },
      h('h2', { id: 'tfa' }, 'Two-factor authentication'),
      twoFactor,
    ),
    h('section', { class: 'card', 'aria-labelledby': 'pw' }, h('h2', { id: 'pw' }, 'Password'), pwForm),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'sessions' },
      h('h2', { id: 'sessions' }, 'Sessions'),
      h(
        'p',
        { class: 'muted' },
        'Sessions end after 14 days without use. Signing out everywhere ends every session of yours, on every device, including this one.',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'button danger',
          onclick: async () => {
            if (
              !(await confirmDialog(
                'Sign out everywhere?',
                'Every session of yours ends, including this one.',
                'Sign out everywhere',
              ))
            )
              return
            await call('POST', '/session/sign-out-everywhere').catch(() => undefined)
            location.assign('/console/sign-in')
          },
        },
        'Sign out everywhere',
      ),
    ),
  )
  renderTwoFactor()
}
