import type { KeyItem, KeyList } from './api-types.js'
import { call, messageOf } from './api.js'
import {
  confirmDialog,
  dialog,
  empty,
  errorBox,
  field,
  h,
  loading,
  notice,
  replace,
  secretValue,
  statusBadge,
  table,
} from './dom.js'
import { ago, num, when } from './format.js'
import { title, type Page } from './page.js'

export async function keysPage(p: Page): Promise<void> {
  title('API keys')
  const status = h('div', { 'aria-live': 'polite' })
  const body = h('div', {}, loading('API keys'))
  // The form offers the utilities and defaults the key list carries: enabled once it has loaded
  // (a click before would open a form with no utilities to choose).
  const createButton = h('button', { type: 'button', class: 'button', disabled: true }, 'Create key')
  replace(
    p.main,
    h(
      'div',
      { class: 'page-head' },
      h(
        'div',
        {},
        h('h1', {}, 'API keys'),
        h(
          'p',
          { class: 'muted' },
          p.mayAll('keys.read')
            ? 'Every key of the workspace. Revoked keys stay listed so their jobs and usage stay attributable.'
            : 'The keys you created.',
        ),
      ),
      createButton,
    ),
    status,
    body,
  )
  let list: KeyList
  const load = async () => {
    try {
      list = await call<KeyList>('GET', '/keys')
      createButton.disabled = false
    } catch (err) {
      replace(
        body,
        errorBox(messageOf(err), () => void load()),
      )
      return
    }
    if (list.items.length === 0) {
      replace(
        body,
        empty(
          'No API keys yet',
          'A key lets a program call the dutil API. Create one for each place it runs, so you can revoke it alone.',
          h('button', { type: 'button', class: 'button', onclick: () => openCreate() }, 'Create your first key'),
        ),
      )
      return
    }
    replace(
      body,
      table(
        'API keys',
        ['Name', 'Prefix', 'Utilities', 'Rate limit', 'Created by', 'Last used', 'Expires', 'Status', 'Actions'],
        list.items.map((k) => [
          h('strong', {}, k.name),
          h('code', {}, `${k.prefix}…`),
          k.utilities.includes('*') ? 'All' : k.utilities.join(', '),
          `${num(k.rateLimitPerMinute)}/min`,
          k.createdBy ?? h('span', { class: 'muted' }, 'CLI'),
          h('span', { title: when(k.lastUsedAt) }, ago(k.lastUsedAt)),
          k.expiresAt ? when(k.expiresAt) : 'Never',
          statusBadge(k.status),
          actions(k),
        ]),
        { captionHidden: true, testId: 'keys-table' },
      ),
    )
  }
  const actions = (k: KeyItem): HTMLElement => {
    const wrap = h('div', { class: 'row-actions' })
    const label = (verb: string) => `${verb} ${k.name}`
    if (k.can.revealSecret)
      wrap.append(
        h(
          'button',
          {
            type: 'button',
            class: 'button secondary small',
            'aria-label': label('Reveal signing secret of'),
            onclick: () => void secret(k, 'reveal'),
          },
          'Signing secret',
        ),
      )
    if (k.can.rotateSecret && k.status === 'active')
      wrap.append(
        h(
          'button',
          {
            type: 'button',
            class: 'button secondary small',
            'aria-label': label('Rotate signing secret of'),
            onclick: () => void secret(k, 'rotate'),
          },
          'Rotate secret',
        ),
      )
    if (k.can.setRateLimit && k.status === 'active')
      wrap.append(
        h(
          'button',
          {
            type: 'button',
            class: 'button secondary small',
            'aria-label': label('Set rate limit of'),
            onclick: () => rateLimit(k),
          },
          'Rate limit',
        ),
      )
    if (k.can.revoke && k.status !== 'revoked')
      wrap.append(
        h(
          'button',
          {
            type: 'button',
            class: 'button danger small',
            'aria-label': label('Revoke'),
            onclick: () => void revoke(k),
          },
          'Revoke',
        ),
      )
    return wrap
  }
  const secret = async (k: KeyItem, kind: 'reveal' | 'rotate') => {
    if (
      kind === 'rotate' &&
      !(await confirmDialog(
        `Rotate the signing secret of ${k.name}?`,
        'Callbacks are signed with the new secret from the next attempt on. Receivers that only know the old secret will refuse them until you update them.',
        'Rotate',
        false,
      ))
    )
      return
    try {
      const res = await call<{ signingSecret: string; source: 'key' | 'workspace' }>(
        'POST',
        `/keys/${k.id}/secret/${kind}`,
      )
      dialog(
        kind === 'rotate' ? `New signing secret of ${k.name}` : `Signing secret of ${k.name}`,
        h(
          'div',
          { class: 'stack' },
          secretValue('Signing secret', res.signingSecret, 'signing-secret'),
          res.source === 'workspace'
            ? notice(
                'This key has no secret of its own and uses the workspace secret. Rotating gives it its own.',
                'info',
              )
            : null,
          h('p', { class: 'hint' }, 'Verify callbacks with it (Standard Webhooks). Keep it out of source control.'),
        ),
        h(
          'button',
          { type: 'button', class: 'button', onclick: (e) => (e.target as HTMLElement).closest('dialog')!.close() },
          'Done',
        ),
      )
    } catch (err) {
      replace(status, errorBox(messageOf(err)))
    }
  }
  const rateLimit = (k: KeyItem) => {
    const input = h('input', {
      type: 'number',
      min: 1,
      max: 100000,
      step: 1,
      value: k.rateLimitPerMinute,
      required: true,
    })
    const err = h('div', { 'aria-live': 'polite' })
    const form = h(
      'form',
      { method: 'dialog', class: 'stack' },
      field('Requests per minute', input, 'Counted over every /v1 request of the key, including job polling.'),
      err,
    )
    const d = dialog(`Rate limit of ${k.name}`, form, [
      h('button', { type: 'button', class: 'button secondary', onclick: () => d.close() }, 'Cancel'),
      h(
        'button',
        {
          type: 'button',
          class: 'button',
          onclick: async () => {
            try {
              await call('PATCH', `/keys/${k.id}`, { rateLimitPerMinute: Number(input.value) })
              d.close()
              replace(
                status,
                notice(`${k.name} may now make ${num(Number(input.value))} requests per minute.`, 'success'),
              )
              await load()
            } catch (e) {
              replace(err, errorBox(messageOf(e)))
            }
          },
        },
        'Save',
      ),
    ])
  }
  const revoke = async (k: KeyItem) => {
    if (
      !(await confirmDialog(
        `Revoke ${k.name}?`,
        'Requests with this key fail at once with 401. Its jobs still waiting to start are cancelled; those already running finish. Its jobs and usage stay listed. This cannot be undone: create a new key instead.',
        'Revoke key',
      ))
    )
      return
    try {
      await call('POST', `/keys/${k.id}/revoke`)
      replace(status, notice(`${k.name} is revoked; its queued jobs are being cancelled.`, 'success'))
      await load()
    } catch (err) {
      replace(status, errorBox(messageOf(err)))
    }
  }
  const openCreate = () => {
    const name = h('input', {
      type: 'text',
      required: true,
      maxlength: 200,
      placeholder: 'e.g. billing-service production',
    })
    const all = h('input', { type: 'radio', name: 'scope', value: 'all', checked: true })
    const some = h('input', { type: 'radio', name: 'scope', value: 'some' })
    const boxes = (list?.defaults.utilities ?? []).map((u) =>
      h('label', { class: 'check' }, h('input', { type: 'checkbox', value: u, name: 'utility' }), u),
    )
    const chosen = h('div', { class: 'checks', hidden: true }, boxes)
    all.addEventListener('change', () => (chosen.hidden = true))
    some.addEventListener('change', () => (chosen.hidden = false))
    const expiry = h(
      'select',
      {},
      h('option', { value: '' }, 'Never'),
      (list?.defaults.expiryDays ?? [30, 90, 365]).map((d) => h('option', { value: String(d) }, `In ${d} days`)),
    )
    const rate = p.mayAll('keys.rateLimit.set')
      ? h('input', { type: 'number', min: 1, max: 100000, step: 1, value: list?.defaults.rateLimitPerMinute ?? 600 })
      : null
    const err = h('div', { 'aria-live': 'polite' })
    const form = h(
      'form',
      { class: 'stack' },
      field('Name', name, 'Where the key runs; shown with its jobs and usage.'),
      h(
        'fieldset',
        { class: 'group' },
        h('legend', {}, 'Utilities'),
        h('label', { class: 'check' }, all, 'All utilities, including ones added later'),
        h('label', { class: 'check' }, some, 'Only these:'),
        chosen,
      ),
      field('Expires', expiry),
      rate
        ? field('Rate limit (requests per minute)', rate)
        : h(
            'p',
            { class: 'hint' },
            `Your keys get the default rate limit of ${num(list?.defaults.rateLimitPerMinute ?? 600)} requests per minute; staff can raise it.`,
          ),
      err,
    )
    const d = dialog('Create an API key', form, [
      h('button', { type: 'button', class: 'button secondary', onclick: () => d.close() }, 'Cancel'),
      h('button', { type: 'submit', class: 'button', form: (form.id = 'create-key') }, 'Create key'),
    ])
    form.addEventListener('submit', async (e) => {
      e.preventDefault()
      const utilities = some.checked
        ? boxes
            .map((b) => b.querySelector('input')!)
            .filter((i) => i.checked)
            .map((i) => i.value)
        : 'all'
      try {
        const created = await call<{ id: string; key: string; signingSecret: string }>('POST', '/keys', {
          name: name.value,
          utilities,
          expiresInDays: expiry.value ? Number(expiry.value) : null,
          ...(rate ? { rateLimitPerMinute: Number(rate.value) } : {}),
        })
        d.close()
        dialog(
          'Your new API key',
          h(
            'div',
            { class: 'stack' },
            notice(
              'Copy the key and the signing secret now: they are shown only this once. Only a hash of the key is stored.',
              'warning',
            ),
            secretValue('API key', created.key, 'new-key'),
            secretValue('Signing secret', created.signingSecret, 'new-signing-secret'),
            h(
              'p',
              { class: 'hint' },
              'Send the key as Authorization: Bearer <key>. The signing secret verifies the callbacks of this key.',
            ),
          ),
          h(
            'button',
            { type: 'button', class: 'button', onclick: (ev) => (ev.target as HTMLElement).closest('dialog')!.close() },
            'I have copied them',
          ),
        )
        await load()
      } catch (e2) {
        replace(err, errorBox(messageOf(e2)))
      }
    })
    name.focus()
  }
  createButton.addEventListener('click', openCreate)
  await load()
}
