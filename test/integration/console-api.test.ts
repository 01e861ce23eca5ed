import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { inject } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { api } from './helpers/api.js'
import { databaseClient } from './helpers/database.js'
import { bootstrapAdmin, ConsoleClient, inviteToken, timeStep, totpCodeAtStep, uniqueEmail } from './helpers/console.js'
import { createKey } from './helpers/keys.js'
import { restartOperator } from './helpers/processes.js'
import { CallbackReceiver } from '../support/callback-receiver.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'

/** The console API as a program would call it: sessions, CSRF, invites, roles, playground. */
const PASSWORD = 'a long enough passphrase'
let admin: ConsoleClient
let files: FileServer
let receiver: CallbackReceiver

async function person(
  role: 'admin' | 'member' | 'external',
  email = uniqueEmail(role),
): Promise<{ client: ConsoleClient; email: string; id: string }> {
  const invited = await admin.call('POST', '/members/invites', { email, role })
  expect(invited.status, JSON.stringify(invited.body)).toBe(201)
  const client = new ConsoleClient()
  const accepted = await client.call('POST', '/invites/accept', {
    token: inviteToken(invited.body.link),
    name: `Test ${role}`,
    password: PASSWORD,
  })
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(201)
  return { client, email, id: accepted.body.user.id }
}

beforeAll(async () => {
  const { link } = bootstrapAdmin(uniqueEmail('api-admin'))
  admin = new ConsoleClient()
  expect(
    (await admin.call('POST', '/invites/accept', { token: inviteToken(link), name: 'API Admin', password: PASSWORD }))
      .status,
  ).toBe(201)
  files = await new FileServer().start()
  const tls = inject('callbackTls')
  receiver = await new CallbackReceiver({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }).start()
})
afterAll(async () => {
  await files?.stop()
  await receiver?.stop()
})

describe('console sessions', () => {
  it('answers 401 without a session, and the same 401 for an unknown e-mail and a wrong password', async () => {
    const anon = new ConsoleClient()
    expect((await anon.call('GET', '/session')).status).toBe(401)
    expect((await anon.call('GET', '/keys')).status).toBe(401)
    const { email } = await person('member')
    const wrong = await anon.signIn(email, 'not the password at all')
    const unknown = await anon.signIn(uniqueEmail('nobody'), 'not the password at all')
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(unknown.body.error.message).toBe(wrong.body.error.message)
  })

  it('sets an HttpOnly, SameSite cookie for 14 days and rotates the session id at every sign-in', async () => {
    const { email } = await person('member')
    const c = new ConsoleClient()
    const first = await c.signIn(email, PASSWORD)
    const cookie = first.headers.getSetCookie().find((x) => x.startsWith('dutil_session='))!
    expect(cookie).toMatch(/HttpOnly/)
    expect(cookie).toMatch(/SameSite=Lax/)
    expect(cookie).toMatch(/Path=\/console/)
    expect(cookie).toMatch(/Max-Age=1209600/)
    const firstId = c.sessionCookie
    await c.signIn(email, PASSWORD)
    expect(c.sessionCookie).not.toBe(firstId)
    const stale = new ConsoleClient()
    ;(stale as unknown as { cookies: Map<string, string> }).cookies.set('dutil_session', firstId!)
    expect((await stale.call('GET', '/session')).status).toBe(401)
    expect((await c.call('GET', '/session')).status).toBe(200)
  })

  it('refuses state-changing calls without the CSRF token or from another origin', async () => {
    const { client } = await person('member')
    expect((await client.call('POST', '/keys', { name: 'no-token' }, { csrf: false })).status).toBe(403)
    const foreign = await client.call('POST', '/keys', { name: 'foreign' }, { origin: 'https://evil.example' })
    expect(foreign.status).toBe(403)
    expect((await client.call('POST', '/keys', { name: 'same-origin' }, { origin: inject('gatewayUrl') })).status).toBe(
      201,
    )
  })

  it('signs out everywhere, and disabling a person ends their sessions at once', async () => {
    const { client, email, id } = await person('member')
    const other = new ConsoleClient()
    expect((await other.signIn(email, PASSWORD)).status).toBe(200)
    expect((await client.call('POST', '/session/sign-out-everywhere')).body.ended).toBe(2)
    expect((await other.call('GET', '/session')).status).toBe(401)
    expect((await client.call('GET', '/session')).status).toBe(401)

    const again = new ConsoleClient()
    expect((await again.signIn(email, PASSWORD)).status).toBe(200)
    expect((await admin.call('PATCH', `/members/${id}`, { disabled: true })).body.disabled).toBe(true)
    expect((await again.call('GET', '/session')).status).toBe(401)
    expect((await again.signIn(email, PASSWORD)).status).toBe(401)
  })
})

describe('console two-factor authentication', () => {
  it('is set up with a first code, then asked for at sign-in, and turned off only with a current code', async () => {
    const { client, email } = await person('member')
    const setup = await client.call('POST', '/account/totp/setup')
    expect(setup.body.otpauthUri).toContain(`secret=${setup.body.secret}`)
    expect(setup.body.qrSvg).toMatch(/^<svg/)
    expect((await client.call('POST', '/account/totp/confirm', { code: '000000' })).status).toBe(400)
    const used = new Set<number>()
    const step = timeStep(Date.now())
    used.add(step)
    expect(
      (await client.call('POST', '/account/totp/confirm', { code: totpCodeAtStep(setup.body.secret, step) })).body
        .totpEnabled,
    ).toBe(true)

    const c = new ConsoleClient()
    expect((await c.signIn(email, PASSWORD)).body).toEqual({ status: 'totp_required' })
    expect((await c.call('GET', '/session')).status).toBe(401)
    used.add(step + 1)
    expect(
      (await c.call('POST', '/session/totp', { code: totpCodeAtStep(setup.body.secret, step + 1) })).body.status,
    ).toBe('signed_in')
    expect((await c.call('GET', '/session')).body.user.totpEnabled).toBe(true)

    expect((await c.call('POST', '/account/totp/disable', { code: '123456' })).status).toBe(400)
    // A code not used yet, within the accepted window around now.
    const now = timeStep(Date.now())
    const unused = [now - 1, now, now + 1].find((s) => !used.has(s))!
    expect(
      (await c.call('POST', '/account/totp/disable', { code: totpCodeAtStep(setup.body.secret, unused) })).body
        .totpEnabled,
    ).toBe(false)
    expect((await new ConsoleClient().signIn(email, PASSWORD)).body.status).toBe('signed_in')
  })
})

describe('console lockout', () => {
  it('counts failures per address (10) and overall (50): many addresses lock the e-mail at the fiftieth', async () => {
    const { email } = await person('member')
    const attacker = new ConsoleClient()
    const fail = (addr: string) =>
      attacker.call('POST', '/session', { email, password: 'wrong wrong wrong' }, { forwardedFor: addr })
    // Nine failures from each of five addresses: no address reaches ten, 45 overall.
    for (let a = 1; a <= 5; a++) for (let i = 0; i < 9; i++) expect((await fail(`198.51.100.${a}`)).status).toBe(401)
    expect(
      (
        await new ConsoleClient().call(
          'POST',
          '/session',
          { email, password: PASSWORD },
          { forwardedFor: '198.51.100.1' },
        )
      ).status,
    ).toBe(200)
    // A success clears only that address; four more failures elsewhere, then the fiftieth locks.
    for (let i = 0; i < 4; i++) expect((await fail(`198.51.100.${10 + i}`)).status).toBe(401)
    expect((await fail('198.51.100.20')).status).toBe(429)
    expect(
      (
        await new ConsoleClient().call(
          'POST',
          '/session',
          { email, password: PASSWORD },
          { forwardedFor: '203.0.113.9' },
        )
      ).status,
    ).toBe(429)
  })
})

describe('console invites and roles', () => {
  it('makes invite links single-use; re-inviting revokes the earlier link; passwords need 10 characters', async () => {
    const email = uniqueEmail('twice')
    const first = await admin.call('POST', '/members/invites', { email, role: 'member' })
    const second = await admin.call('POST', '/members/invites', { email, role: 'external' })
    const c = new ConsoleClient()
    expect((await c.call('POST', '/invites/lookup', { token: inviteToken(first.body.link) })).status).toBe(404)
    expect((await c.call('POST', '/invites/lookup', { token: inviteToken(second.body.link) })).body).toMatchObject({
      email,
      role: 'external',
    })
    const short = await c.call('POST', '/invites/accept', {
      token: inviteToken(second.body.link),
      name: 'Shorty',
      password: 'too short',
    })
    expect(short.status).toBe(400)
    expect(short.body.error.details).toEqual([{ path: 'password', message: 'must be at least 10 characters' }])
    expect(
      (
        await c.call('POST', '/invites/accept', {
          token: inviteToken(second.body.link),
          name: 'Ok',
          password: PASSWORD,
        })
      ).body.user.role,
    ).toBe('external')
    expect(
      (
        await new ConsoleClient().call('POST', '/invites/accept', {
          token: inviteToken(second.body.link),
          name: 'Again',
          password: PASSWORD,
        })
      ).status,
    ).toBe(404)
    expect((await admin.call('POST', '/members/invites', { email, role: 'member' })).status).toBe(409)
  })

  it('applies a role change on the next request: a member made external sees only their own keys', async () => {
    const { client, id } = await person('member')
    await createKey({ name: 'cli-made' })
    expect((await client.call('POST', '/keys', { name: 'mine' })).status).toBe(201)
    expect((await client.call('GET', '/keys')).body.items.length).toBeGreaterThan(1)
    expect((await admin.call('PATCH', `/members/${id}`, { role: 'external' })).status).toBe(200)
    expect((await client.call('GET', '/keys')).body.items.map((k: { name: string }) => k.name)).toEqual(['mine'])
    expect((await client.call('GET', '/members')).status).toBe(403)
  })

  it('lets only admins manage members', async () => {
    const { client } = await person('member')
    expect((await client.call('GET', '/members')).status).toBe(403)
    expect((await client.call('POST', '/members/invites', { email: uniqueEmail('x'), role: 'admin' })).status).toBe(403)
  })
})

describe('console callback delivery log and redelivery', () => {
  it('shows every attempt on the job page; Redeliver sends the same event with the same webhook-id (staff any job, externals their own)', async () => {
    const owner = await person('external')
    const made = await owner.client.call('POST', '/keys', { name: 'hooks' })
    expect(made.status).toBe(201)
    const path = '/console-redeliver'
    const url = files.add('rd.pdf', await makePdf(1))
    const start = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key: made.body.key,
      body: { input: { url }, callbackUrl: receiver.url(path, 500, 200) },
    })
    const id = start.body.id
    await receiver.waitFor(path, 2)
    await expect
      .poll(async () => (await admin.call('GET', `/jobs/${id}`)).body.callbackDelivery?.status, { timeout: 15_000 })
      .toBe('delivered')
    const first = (await admin.call('GET', `/jobs/${id}`)).body
    expect(first.callbackLog).toEqual([
      expect.objectContaining({
        round: 1,
        attempt: 1,
        outcome: 'retrying',
        statusCode: 500,
        errorClass: 'http_status',
        error: 'The receiver answered 500.',
        nextAttemptAt: expect.any(String),
        durationMs: expect.any(Number),
      }),
      expect.objectContaining({
        round: 1,
        attempt: 2,
        outcome: 'delivered',
        statusCode: 200,
        errorClass: null,
        error: null,
        nextAttemptAt: null,
      }),
    ])

    // Another external cannot see the job, so cannot redeliver it.
    const stranger = await person('external')
    expect((await stranger.client.call('POST', `/jobs/${id}/callback/redeliver`)).status).toBe(404)
    // A member (staff) can: the third request has the same webhook-id and a valid signature.
    const member = await person('member')
    const asked = await member.client.call('POST', `/jobs/${id}/callback/redeliver`)
    expect(asked.status, JSON.stringify(asked.body)).toBe(202)
    expect(asked.body).toMatchObject({ jobId: id, round: 2 })
    const got = await receiver.waitFor(path, 3)
    expect(got.map((g) => g.headers['webhook-id'])).toEqual([id, id, id])
    expect(new Webhook(made.body.signingSecret).verify(got[2].body, got[2].headers)).toMatchObject({
      type: 'job.succeeded',
      data: { id },
    })
    await expect
      .poll(async () => (await admin.call('GET', `/jobs/${id}`)).body.callbackLog.length, { timeout: 15_000 })
      .toBe(3)
    expect((await admin.call('GET', `/jobs/${id}`)).body.callbackLog[2]).toMatchObject({
      round: 2,
      attempt: 1,
      outcome: 'delivered',
      statusCode: 200,
    })
    // The owner may redeliver their own key's job too, once the last round has ended.
    await expect
      .poll(async () => (await owner.client.call('POST', `/jobs/${id}/callback/redeliver`)).status, { timeout: 15_000 })
      .toBe(202)
    await receiver.waitFor(path, 4)

    // A job without a callback: refused with the reason.
    const sync = await api('POST', '/v1/utilities/split-pdf', { key: made.body.key, body: { input: { url } } })
    const refused = await admin.call('POST', `/jobs/${sync.body.id}/callback/redeliver`)
    expect(refused.status).toBe(409)
    expect(refused.body.error).toMatchObject({ code: 'conflict', message: 'The job has no callback.' })
  })
})

describe('console playground', () => {
  it('signs playground callbacks with a secret of their own, never the workspace secret; members reveal it, only admins rotate it', async () => {
    const { client: member } = await person('member')
    const { client: external } = await person('external')
    const workspace = (await member.call('POST', '/workspace/signing-secret/reveal')).body.signingSecret
    const secret = (await member.call('POST', '/workspace/playground-secret/reveal')).body.signingSecret
    expect(secret).toMatch(/^whsec_/)
    expect(secret).not.toBe(workspace)
    expect((await member.call('POST', '/workspace/playground-secret/rotate')).status).toBe(403)
    for (const path of ['/workspace/signing-secret/reveal', '/workspace/playground-secret/reveal'])
      expect((await external.call('POST', path)).status).toBe(403)
    // An external's playground run with metadata of their choosing: what their receiver gets is
    // signed with the playground secret and does not verify under the workspace secret.
    const path = '/hooks/playground'
    const callbackUrl = receiver.url(path, 200)
    const run = await external.call('POST', '/playground/split-pdf', {
      input: { url: files.add('p.pdf', await makePdf(1)) },
      metadata: { from: 'console' },
      callbackUrl,
    })
    expect(run.status, JSON.stringify(run.body)).toBe(202)
    const [got] = await receiver.waitFor(path, 1)
    const event = new Webhook(secret).verify(got.body, got.headers) as {
      type: string
      data: { id: string; metadata: unknown }
    }
    expect(event).toMatchObject({ type: 'job.succeeded', data: { id: run.body.id, metadata: { from: 'console' } } })
    expect(() => new Webhook(workspace).verify(got.body, got.headers)).toThrow()

    const rotated = (await admin.call('POST', '/workspace/playground-secret/rotate')).body.signingSecret
    expect(rotated).not.toBe(secret)
    expect((await member.call('POST', '/workspace/playground-secret/reveal')).body.signingSecret).toBe(rotated)
    // The workspace secret is untouched by it.
    expect((await member.call('POST', '/workspace/signing-secret/reveal')).body.signingSecret).toBe(workspace)
  })

  it("validates playground input like the API and keeps playground jobs out of every key's list", async () => {
    const { client } = await person('external')
    const bad = await client.call('POST', '/playground/split-pdf', { input: {} })
    expect(bad.status).toBe(400)
    expect(bad.body.error.details).toEqual([{ path: 'input.url', message: 'is required' }])
    const run = await client.call('POST', '/playground/split-pdf', {
      input: { url: files.add('q.pdf', await makePdf(1)) },
    })
    expect(run.status).toBe(202)
    const { key } = await createKey()
    expect((await api('GET', `/v1/jobs/${run.body.id}`, { key })).status).toBe(404)
    const summary = (await client.call('GET', '/jobs?key=playground')).body.items[0]
    expect(summary).toMatchObject({ id: run.body.id, source: 'playground', apiKeyName: null })
  })

  it('keeps daily usage in the job record, where it outlives the jobs, and shows it on the usage page', async () => {
    const { client, email } = await person('member')
    const run = await client.call('POST', '/playground/split-pdf', {
      input: { url: files.add('u.pdf', await makePdf(1)) },
    })
    expect(run.status).toBe(202)
    const today = new Date().toISOString().slice(0, 10)
    const db = databaseClient(inject('databaseUrl'))
    try {
      const stored = async () =>
        (
          await db.query<{ succeeded: number }>(
            "SELECT succeeded FROM usage_daily WHERE day = $1 AND source = 'playground' AND user_email = $2",
            [today, email],
          )
        ).rows[0]?.succeeded ?? 0
      await expect.poll(stored, { timeout: 60_000, interval: 500 }).toBe(1)
    } finally {
      await db.end()
    }
    const page = await client.call('GET', '/usage?days=7')
    expect(page.status).toBe(200)
    expect(
      page.body.byKey.find(
        (k: { source: string; userEmail: string }) => k.source === 'playground' && k.userEmail === email,
      ),
    ).toMatchObject({ jobs: 1, succeeded: 1 })
  })
})

describe('callback errors in the console', () => {
  afterAll(() => restartOperator({}))

  it('name the address a callback host resolved to for admins only', async () => {
    const { client: external } = await person('external')
    const made = await external.call('POST', '/keys', { name: 'external-hooks' })
    expect(made.status).toBe(201)
    // The operator as installed: loopback is not an allowed destination (the tests' allowance off).
    await restartOperator({ DUTIL_ALLOW_LOOPBACK_URLS: 'false' })
    const run = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key: made.body.key,
      body: {
        input: { url: 'https://localhost:1/a.pdf' },
        callbackUrl: `https://localhost:${new URL(receiver.url('/hooks/private', 200)).port}/hooks/private`,
      },
    })
    expect(run.status).toBe(202)
    const id = run.body.id as string
    let seen: any
    await expect
      .poll(async () => (seen = (await admin.call('GET', `/jobs/${id}`)).body).callbackDelivery?.status, {
        timeout: 60_000,
        interval: 250,
      })
      .toBe('failed')
    // The admin sees the address; the external (whose key it is) does not, in the summary or the log.
    expect(seen.callbackDelivery.lastError).toContain('resolves to 127.0.0.1')
    expect(seen.callbackLog.at(-1).error).toContain('127.0.0.1')
    const theirs = (await external.call('GET', `/jobs/${id}`)).body
    expect(theirs.callbackDelivery.lastError).toContain('resolves to (an address)')
    expect(JSON.stringify([theirs.callbackDelivery, theirs.callbackLog])).not.toContain('127.0.0.1')
    expect(theirs.callbackLog.at(-1).error).toContain('(an address)')
  })
})
