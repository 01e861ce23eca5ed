import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  bootstrapAdmin,
  ConsoleClient,
  invitePerson,
  inviteToken,
  timeStep,
  totpCodeAtStep,
  uniqueEmail,
} from './helpers/console.js'
import { restartGateway } from './helpers/processes.js'

/**
 * Console attacks from the security review (docs/security.md items 5, 6 and 13), performed as
 * an attacker would against the real platform: concurrent password guesses, two admins demoting
 * each other at the same moment, and guessing codes to turn two-factor authentication off.
 */
const PASSWORD = 'a long enough passphrase'
let admin: ConsoleClient

const person = (role: 'admin' | 'member', by = admin) => invitePerson(by, role, PASSWORD)

const tally = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {})

beforeAll(async () => {
  const { link } = bootstrapAdmin(uniqueEmail('security-admin'))
  admin = new ConsoleClient()
  expect(
    (
      await admin.call('POST', '/invites/accept', {
        token: inviteToken(link),
        name: 'Security Admin',
        password: PASSWORD,
      })
    ).status,
  ).toBe(201)
})

describe('concurrent password guesses', () => {
  it('checks at most ten of 100 simultaneous guesses from one address; the rest and then the right password are locked out', async () => {
    const { email } = await person('member')
    const attacker = new ConsoleClient()
    const statuses = (
      await Promise.all(
        Array.from({ length: 100 }, () =>
          attacker.call(
            'POST',
            '/session',
            { email, password: 'wrong wrong wrong' },
            { forwardedFor: '198.51.100.77' },
          ),
        ),
      )
    ).map((r) => r.status)
    const t = tally(statuses)
    expect(Object.keys(t).sort(), JSON.stringify(t)).toEqual(['401', '429'])
    // Ten guesses were checked; the tenth failure locked the e-mail, so nine answered 401.
    expect(t[401], JSON.stringify(t)).toBe(9)
    expect(
      (
        await new ConsoleClient().call(
          'POST',
          '/session',
          { email, password: PASSWORD },
          { forwardedFor: '203.0.113.50' },
        )
      ).status,
    ).toBe(429)
  })

  it('checks at most fifty of 100 simultaneous guesses from 100 addresses', async () => {
    const { email } = await person('member')
    const attacker = new ConsoleClient()
    const statuses = (
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          attacker.call(
            'POST',
            '/session',
            { email, password: 'wrong wrong wrong' },
            { forwardedFor: `198.51.100.${100 + i}` },
          ),
        ),
      )
    ).map((r) => r.status)
    const t = tally(statuses)
    expect(Object.keys(t).sort(), JSON.stringify(t)).toEqual(['401', '429'])
    expect(t[401], JSON.stringify(t)).toBe(49)
    expect((await new ConsoleClient().signIn(email, PASSWORD)).status).toBe(429)
  })
})

describe('turning two-factor authentication off', () => {
  it('counts wrong codes with the sign-in lockout: after ten, even the right code is refused and 2FA stays on', async () => {
    const { client, email } = await person('member')
    const setup = await client.call('POST', '/account/totp/setup')
    const step = timeStep(Date.now())
    expect(
      (await client.call('POST', '/account/totp/confirm', { code: totpCodeAtStep(setup.body.secret, step) })).body
        .totpEnabled,
    ).toBe(true)
    const wrong = (n: number) =>
      String((Number(totpCodeAtStep(setup.body.secret, step)) + 500_000 + n) % 1_000_000).padStart(6, '0')
    const statuses: number[] = []
    for (let i = 0; i < 10; i++)
      statuses.push((await client.call('POST', '/account/totp/disable', { code: wrong(i) })).status)
    expect(statuses).toEqual([...Array(9).fill(400), 429])
    const now = timeStep(Date.now())
    const right = await client.call('POST', '/account/totp/disable', {
      code: totpCodeAtStep(setup.body.secret, now === step ? now + 1 : now),
    })
    expect(right.status).toBe(429)
    expect(right.headers.get('retry-after')).toMatch(/^\d+$/)
    // Still on: password sign-in asks for a code (from an address of its own, once the lock ends; here it is locked).
    expect((await client.call('GET', '/session')).body.user.totpEnabled).toBe(true)
    expect((await new ConsoleClient().signIn(email, PASSWORD)).status).toBe(429)
  })

  it('counts wrong current passwords when changing the password', async () => {
    const { client } = await person('member')
    const statuses: number[] = []
    for (let i = 0; i < 10; i++)
      statuses.push(
        (
          await client.call('POST', '/account/password', {
            currentPassword: `guess number ${i}`,
            newPassword: 'another long passphrase',
          })
        ).status,
      )
    expect(statuses).toEqual([...Array(9).fill(400), 429])
    expect(
      (
        await client.call('POST', '/account/password', {
          currentPassword: PASSWORD,
          newPassword: 'another long passphrase',
        })
      ).status,
    ).toBe(429)
  })
})

describe('the last-admin rule under concurrency', () => {
  it('lets only one of two admins who demote each other at the same moment succeed, round after round', async () => {
    // Only two active admins may remain for the race to matter: disable every other one, and
    // enable them again at the end (their sessions end; later test files bootstrap their own).
    const a = await person('admin')
    const others = (await a.client.call('GET', '/members')).body.members.filter(
      (m: { id: string; role: string; disabled: boolean }) => m.role === 'admin' && !m.disabled && m.id !== a.id,
    )
    for (const m of others)
      expect((await a.client.call('PATCH', `/members/${m.id}`, { disabled: true })).status).toBe(200)
    let survivor = a
    try {
      for (let round = 0; round < 5; round++) {
        const b = await person('admin', survivor.client)
        const [ab, ba] = await Promise.all([
          survivor.client.call('PATCH', `/members/${b.id}`, { role: 'member' }),
          b.client.call('PATCH', `/members/${survivor.id}`, { role: 'member' }),
        ])
        const statuses = [ab.status, ba.status].sort()
        // One wins. The other is refused: 409 (the last-admin rule) when both were checked while
        // both were admins, 403 when the winner's change had already made its author a member
        // (the two requests did not overlap: on a loaded machine they need not).
        expect(
          [
            [200, 403],
            [200, 409],
          ],
          `round ${round}: ${JSON.stringify([ab.body, ba.body])}`,
        ).toContainEqual(statuses)
        const lost = ab.status === 200 ? ba : ab
        expect(lost.body.error.code).toBe(lost.status === 409 ? 'conflict' : 'forbidden')
        const members = (await (ab.status === 200 ? survivor : b).client.call('GET', '/members')).body.members
        expect(
          members.filter((m: { role: string; disabled: boolean }) => m.role === 'admin' && !m.disabled),
        ).toHaveLength(1)
        if (ba.status === 200) survivor = b
      }
    } finally {
      for (const m of others) await survivor.client.call('PATCH', `/members/${m.id}`, { disabled: false })
    }
  })
})

describe('forged X-Forwarded-For', () => {
  afterAll(() => restartGateway({}))

  it('is ignored from a client that is not a trusted proxy: ten guesses under ten made-up addresses lock the e-mail', async () => {
    // An admin of its own (earlier tests of this file demote and sign out theirs).
    const { link } = bootstrapAdmin(uniqueEmail('forwarded-admin'))
    const inviter = new ConsoleClient()
    expect(
      (
        await inviter.call('POST', '/invites/accept', {
          token: inviteToken(link),
          name: 'Forwarded Admin',
          password: PASSWORD,
        })
      ).status,
    ).toBe(201)
    const { email } = await person('member', inviter)
    // The gateway as installed with no trusted proxies: the connection's own address counts.
    await restartGateway({ DUTIL_TRUSTED_PROXIES: '' })
    const attacker = new ConsoleClient()
    const statuses: number[] = []
    for (let i = 0; i < 12; i++)
      statuses.push(
        (
          await attacker.call(
            'POST',
            '/session',
            { email, password: 'wrong wrong wrong' },
            { forwardedFor: `198.51.100.${i + 1}` },
          )
        ).status,
      )
    // Nine wrong answers, then the tenth locks: one address (loopback), whatever the header said.
    expect(tally(statuses)).toEqual({ 401: 9, 429: 3 })
    expect(
      (
        await new ConsoleClient().call(
          'POST',
          '/session',
          { email, password: PASSWORD },
          { forwardedFor: '203.0.113.60' },
        )
      ).status,
    ).toBe(429)
  })
})
