import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { api } from './helpers/api.js'
import {
  launchBrowser,
  overflowsSideways,
  personContext,
  screenshot,
  unlabelledControls,
  waitForHeading,
} from './helpers/browser.js'
import { bootstrapAdmin, ConsoleClient, inviteToken, totpCode, uniqueEmail } from './helpers/console.js'
import { catalog } from '../../runners/catalog.js'
import { createKey } from './helpers/keys.js'
import { restartGateway } from './helpers/processes.js'
import { CallbackReceiver } from '../support/callback-receiver.js'
import { FileServer } from '../support/file-server.js'
import { makeEncryptedPdf, makePdf } from '../support/pdfs.js'

/**
 * The console end to end in Debian's Chromium against the real platform: people, roles,
 * sign-in (password, TOTP, lockout, identity provider), keys, jobs, usage and the playground.
 * Steps share one workspace and run in order; each saves a screenshot of its page.
 */
const PASSWORD = 'correct horse battery staple'
let browser: Browser
let files: FileServer
const people = {
  admin: {
    email: uniqueEmail('admin'),
    ctx: undefined as unknown as BrowserContext,
    page: undefined as unknown as Page,
  },
  member: {
    email: uniqueEmail('member'),
    ctx: undefined as unknown as BrowserContext,
    page: undefined as unknown as Page,
    link: '',
  },
  external: {
    email: uniqueEmail('guest', 'partner.test'),
    ctx: undefined as unknown as BrowserContext,
    page: undefined as unknown as Page,
    link: '',
  },
}
let externalKey = ''
let externalJobId = ''
let adminKeyName = ''
let adminJobId = ''

let receiver: CallbackReceiver

beforeAll(async () => {
  files = await new FileServer().start()
  const tls = inject('callbackTls')
  receiver = await new CallbackReceiver({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }).start()
  browser = await launchBrowser()
})
afterAll(async () => {
  await browser?.close()
  await files?.stop()
  await receiver?.stop()
})

async function acceptInvite(page: Page, link: string, name: string): Promise<void> {
  await page.goto(link)
  await page.getByLabel('Your name').fill(name)
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
  await page.getByLabel('Repeat the password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Create my account' }).click()
  await waitForHeading(page, 'Jobs')
}

async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto('/console/sign-in')
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

async function invite(page: Page, email: string, role: string): Promise<string> {
  await page.goto('/console/members')
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Role', { exact: true }).selectOption(role)
  await page.getByRole('button', { name: 'Create invite link' }).click()
  const link = (await page.getByTestId('invite-link').textContent())!
  expect(link).toMatch(/\/console\/invite#[\w-]{43}$/)
  return link
}

describe('console, end to end in Chromium', () => {
  it('bootstraps the first admin with a one-time link from `dutil admin create`', async () => {
    const { link } = bootstrapAdmin(people.admin.email)
    people.admin.ctx = await personContext(browser)
    const page = (people.admin.page = await people.admin.ctx.newPage())
    await page.goto(link)
    await expect.poll(() => page.getByTestId('invite-email').textContent()).toBe(people.admin.email)
    await screenshot(page, '01-accept-invite')
    await acceptInvite(page, link, 'Ada Admin')
    await expect.poll(() => page.getByTestId('who').textContent()).toBe('Ada Admin')
    await screenshot(page, '02-jobs-empty')
    // The link was single-use.
    const again = await personContext(browser)
    const p2 = await again.newPage()
    await p2.goto(link)
    await p2.getByText('This invite link is not valid any more', { exact: false }).waitFor()
    await again.close()
  })

  it('lets the admin invite a member and an external, who accept their links', async () => {
    const page = people.admin.page
    people.member.link = await invite(page, people.member.email, 'member')
    people.external.link = await invite(page, people.external.email, 'external')
    await page.getByTestId('invites-table').getByText(people.external.email).waitFor()
    expect(await unlabelledControls(page)).toEqual([])
    await screenshot(page, '03-members-invites')
    for (const who of ['member', 'external'] as const) {
      people[who].ctx = await personContext(browser)
      people[who].page = await people[who].ctx.newPage()
      await acceptInvite(people[who].page, people[who].link, who === 'member' ? 'Max Member' : 'Gail Guest')
    }
    expect(await people.external.page.getByRole('link', { name: 'Members' }).count()).toBe(0)
    await page.reload()
    await page.getByTestId('members-table').getByText(people.external.email).waitFor()
  })

  it('enrols TOTP, asks for a code at password sign-in, and refuses a replayed code', async () => {
    const page = people.member.page
    await page.goto('/console/account')
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click()
    const secret = (await page.getByTestId('totp-secret').textContent())!
    await screenshot(page, '04-account-totp-setup')
    await page.getByLabel('Code from the app').fill(totpCode(secret))
    await page.getByRole('button', { name: 'Turn on' }).click()
    await page.getByText('Two-factor authentication is on.').waitFor()
    // A new browser: password, then the code (the next time step, within the accepted drift).
    const fresh = await personContext(browser)
    const p2 = await fresh.newPage()
    await signIn(p2, people.member.email)
    await p2.getByLabel('Authentication code').waitFor()
    await screenshot(p2, '05-sign-in-totp')
    const code = totpCode(secret, 1)
    await p2.getByLabel('Authentication code').fill(code)
    await p2.getByRole('button', { name: 'Verify' }).click()
    await waitForHeading(p2, 'Jobs')
    // The same code again, in a third browser: refused.
    const third = await personContext(browser)
    const p3 = await third.newPage()
    await signIn(p3, people.member.email)
    await p3.getByLabel('Authentication code').fill(code)
    await p3.getByRole('button', { name: 'Verify' }).click()
    await p3.getByText('That code was already used').waitFor()
    await Promise.all([fresh.close(), third.close()])
  })

  it('locks password sign-in for an e-mail after ten failures from one address', async () => {
    const email = uniqueEmail('locked')
    const link = await invite(people.admin.page, email, 'member')
    const client = new ConsoleClient()
    expect(
      (
        await client.call('POST', '/invites/accept', {
          token: inviteToken(link),
          name: 'Lou Locked',
          password: PASSWORD,
        })
      ).status,
    ).toBe(201)
    const attacker = new ConsoleClient()
    for (let i = 1; i <= 9; i++) expect((await attacker.signIn(email, `wrong password ${i}`)).status).toBe(401)
    expect((await attacker.signIn(email, 'wrong password 10')).status).toBe(429)
    // Now even the right password is refused, in the browser too.
    const ctx = await personContext(browser)
    const page = await ctx.newPage()
    await signIn(page, email)
    await page.getByText('Too many failed sign-ins for this e-mail').waitFor()
    await screenshot(page, '06-sign-in-locked')
    const right = await new ConsoleClient().signIn(email, PASSWORD)
    expect(right.status).toBe(429)
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(800)
    await ctx.close()
  })

  it('creates keys in the console that call the API, shown once with copy buttons', async () => {
    // The external creates one; the admin another.
    const ext = people.external.page
    await ext.goto('/console/keys')
    await ext.getByRole('button', { name: 'Create your first key' }).click()
    await ext.getByLabel('Name').fill('guest-laptop')
    expect(await ext.getByLabel('Rate limit (requests per minute)').count()).toBe(0)
    await ext.getByRole('button', { name: 'Create key' }).last().click()
    externalKey = (await ext.getByTestId('new-key').textContent())!
    expect(externalKey).toMatch(/^du_live_[0-9a-f]{48}$/)
    expect(await ext.getByTestId('new-signing-secret').textContent()).toMatch(/^whsec_/)
    await ext.getByRole('button', { name: 'I have copied them' }).click()

    const admin = people.admin.page
    adminKeyName = `billing-${Math.random().toString(36).slice(2, 6)}`
    // The key list answers late, as on a busy gateway: the form, opened as soon as it can be,
    // still offers the utilities the list carries.
    await admin.route(
      '**/console/api/keys',
      async (route) => {
        if (route.request().method() === 'GET') await new Promise((r) => setTimeout(r, 2_000))
        await route.fallback()
      },
      { times: 1 },
    )
    await admin.goto('/console/keys')
    await admin.getByRole('button', { name: 'Create key' }).first().click()
    await admin.getByLabel('Name').fill(adminKeyName)
    await admin.getByLabel('Only these:').check()
    await admin.getByLabel('split-pdf').check()
    await admin.getByLabel('Expires').selectOption('90')
    await admin.getByLabel('Rate limit (requests per minute)').fill('1200')
    await admin.getByRole('button', { name: 'Create key' }).last().click()
    const adminKey = (await admin.getByTestId('new-key').textContent())!
    await screenshot(admin, '07-key-created', false)
    await admin.getByRole('button', { name: 'I have copied them' }).click()
    await admin.getByTestId('keys-table').getByText(adminKeyName).waitFor()
    await screenshot(admin, '08-keys')

    // Both keys work on the public API; each key sees only its own jobs.
    const url = files.add('three.pdf', await makePdf(3))
    const extJob = await api('POST', '/v1/utilities/split-pdf', {
      key: externalKey,
      body: { input: { url }, metadata: { ticket: 'T-42' } },
    })
    expect(extJob.status).toBe(200)
    externalJobId = extJob.body.id
    const admJob = await api('POST', '/v1/utilities/split-pdf', { key: adminKey, body: { input: { url } } })
    expect(admJob.status).toBe(200)
    adminJobId = admJob.body.id
    const limits = await api('GET', '/v1/jobs', { key: adminKey })
    expect(limits.headers.get('ratelimit-limit')).toBe('1200')
    expect(limits.body.items.map((j: { id: string }) => j.id)).toEqual([adminJobId])
  })

  it('runs a utility from the playground form: a playground job under the person, no key', async () => {
    const page = people.external.page
    const url = files.add('two.pdf', await makePdf(2))
    await page.goto('/console/playground?utility=split-pdf')
    await page.locator('[data-path="input.url"]').fill(url)
    expect(await unlabelledControls(page)).toEqual([])
    await page.getByRole('button', { name: 'Run Split PDF' }).click()
    await expect.poll(() => page.getByTestId('playground-status').textContent(), { timeout: 60_000 }).toBe('succeeded')
    await page.getByRole('link', { name: 'page-002.pdf' }).waitFor()
    await screenshot(page, '09-playground')
    const client = await signedInClient(people.external.email)
    const list = await client.call('GET', '/jobs')
    const run = list.body.items.find((j: { source: string }) => j.source === 'playground')
    expect(run).toMatchObject({
      source: 'playground',
      userEmail: people.external.email,
      apiKeyName: null,
      utility: 'split-pdf',
      status: 'succeeded',
      fileCount: 2,
    })
    // The public API never shows it to a key.
    expect((await api('GET', `/v1/jobs/${run.id}`, { key: externalKey })).status).toBe(404)
  })

  it("runs the playground on documents from this computer: a file chosen, files dropped; they are the person's own", async () => {
    const page = people.admin.page
    await page.goto('/console/playground?utility=split-pdf')
    await page.getByTestId('playground-file').setInputFiles({
      name: 'three pages.pdf',
      mimeType: 'application/pdf',
      buffer: await makePdf(3),
    })
    await expect.poll(() => page.getByTestId('playground-files').textContent()).toMatch(/^three pages\.pdf \(\d+ KB\)/)
    expect(await unlabelledControls(page)).toEqual([])
    await page.getByRole('button', { name: 'Run Split PDF' }).click()
    await expect.poll(() => page.getByTestId('playground-status').textContent(), { timeout: 60_000 }).toBe('succeeded')
    await page.getByRole('link', { name: 'page-003.pdf' }).waitFor()
    // Two PDFs dropped on merge-pdf's zone, as a browser drops them.
    await page.goto('/console/playground?utility=merge-pdf')
    const [a, b] = [await makePdf(1), await makePdf(2)]
    // The page draws its form once the utilities are loaded: drop on the zone once it is there.
    await page.getByText('Documents from this computer').waitFor()
    // Run in the page (a browser's DataTransfer and DragEvent), as a drop of two files.
    await page.evaluate(`(() => {
      const data = new DataTransfer()
      for (const [name, bytes] of ${JSON.stringify([
        ['a.pdf', [...a]],
        ['b.pdf', [...b]],
      ])}) data.items.add(new File([new Uint8Array(bytes)], name, { type: 'application/pdf' }))
      document.querySelector('[data-testid="playground-drop"]')
        .dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }))
    })()`)
    await expect.poll(() => page.getByTestId('playground-files').textContent()).toMatch(/^a\.pdf .*, b\.pdf /)
    await page.getByRole('button', { name: 'Run Merge PDFs' }).click()
    await expect.poll(() => page.getByTestId('playground-status').textContent(), { timeout: 60_000 }).toBe('succeeded')
    await page.getByRole('link', { name: 'merged.pdf' }).waitFor()
    await screenshot(page, '09b-playground-files')
    const client = await signedInClient(people.admin.email)
    const merged = (await client.call('GET', '/jobs')).body.items.find(
      (j: { source: string; utility: string }) => j.source === 'playground' && j.utility === 'merge-pdf',
    )
    expect(merged).toMatchObject({ status: 'succeeded', userEmail: people.admin.email })
    // The files are the person's: no key lists them.
    expect((await api('GET', '/v1/files', { key: externalKey })).body.items).toEqual([])
  })

  it('takes a password in a password field: a protected PDF from this computer opened and unprotected', async () => {
    const page = people.admin.page
    await page.goto('/console/playground?utility=edit-pdf')
    await page.getByTestId('playground-file').setInputFiles({
      name: 'locked.pdf',
      mimeType: 'application/pdf',
      buffer: await makeEncryptedPdf(1),
    })
    const password = page.getByLabel('Password', { exact: true })
    expect(await password.getAttribute('type')).toBe('password')
    await password.fill('secret-owner')
    expect(await unlabelledControls(page)).toEqual([])
    await page.getByRole('button', { name: 'Run Edit a PDF' }).click()
    await expect.poll(() => page.getByTestId('playground-status').textContent(), { timeout: 60_000 }).toBe('succeeded')
    await page.getByRole('link', { name: 'locked.pdf' }).waitFor()
    // The page shows the job as the API does: no password anywhere in it.
    expect(await page.content()).not.toContain('secret-owner')
  })

  it('lists jobs with filters and shows a job in detail', async () => {
    const page = people.admin.page
    await page.goto('/console/jobs')
    await page.getByTestId('jobs-table').getByText(externalJobId).waitFor()
    await page.getByTestId('jobs-table').getByText(adminJobId).waitFor()
    await screenshot(page, '10-jobs')
    expect(await unlabelledControls(page)).toEqual([])
    // Small screens: the same page, nothing scrolls sideways but the table itself.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.getByRole('navigation', { name: 'Console' }).waitFor()
    expect(await overflowsSideways(page)).toBe(false)
    await screenshot(page, '15-jobs-phone')
    await page.setViewportSize({ width: 1280, height: 860 })
    // Other test files' jobs are in the list too: filter down to the admin's key.
    await page.getByLabel('Key').selectOption({ label: adminKeyName })
    await page.getByLabel('Status').selectOption('failed')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.getByText('No matching jobs').waitFor()
    await page.getByLabel('Status').selectOption('succeeded')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.getByTestId('jobs-table').getByText(adminJobId).waitFor()
    expect(await page.getByTestId('jobs-table').getByText(externalJobId).count()).toBe(0)
    await page.goto(`/console/jobs/${externalJobId}`)
    await expect.poll(() => page.getByTestId('job-status').textContent()).toBe('succeeded')
    await page.getByRole('link', { name: 'page-003.pdf' }).waitFor()
    await page.getByText('T-42').waitFor()
    // The runner's count of pages, kept after the job finished.
    expect((await page.getByTestId('job-progress').textContent())?.trim()).toBe('3 of 3 pages')
    await screenshot(page, '11-job-detail')
  })

  it("shows a job's callback delivery log, and redelivers the callback from the job page", async () => {
    const url = files.add('hooked.pdf', await makePdf(1))
    const hook = receiver.url('/e2e-hook', 500, 200)
    // A key of its own (made like `dutil keys create`): the usage and ownership tests count the console keys' jobs.
    const { key } = await createKey()
    const started = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key,
      body: { input: { url }, callbackUrl: hook },
    })
    expect(started.status).toBe(202)
    await receiver.waitFor('/e2e-hook', 2)
    const page = people.admin.page
    await page.goto(`/console/jobs/${started.body.id}`)
    const log = page.getByTestId('callback-log')
    // The page shows the log once the delivery is recorded (it refreshes while the job runs):
    // reloaded until it does, each time counted once the page has drawn the job.
    await expect
      .poll(
        async () => {
          await page.reload()
          await page.getByTestId('job-status').waitFor()
          return log.locator('tbody tr').count()
        },
        { timeout: 15_000 },
      )
      .toBe(2)
    expect(await log.locator('tbody tr').nth(0).textContent()).toContain('HTTP 500')
    expect(await log.locator('tbody tr').nth(1).textContent()).toContain('delivered')
    await screenshot(page, '12-callback-log')
    await page.getByRole('button', { name: 'Redeliver' }).click()
    await page.getByText('Redelivery asked for (round 2)').waitFor()
    const got = await receiver.waitFor('/e2e-hook', 3)
    expect(got[2].headers['webhook-id']).toBe(started.body.id)
  })

  it('charts usage per day, key and utility, including the playground run', async () => {
    const page = people.admin.page
    await page.goto('/console/usage?days=7')
    await page.getByTestId('jobs-chart').waitFor()
    expect(Number(await page.getByTestId('usage-total-jobs').textContent())).toBeGreaterThanOrEqual(3)
    const today = new Date().toISOString().slice(0, 10)
    expect(Number(await page.locator(`[data-day="${today}"]`).getAttribute('data-jobs'))).toBeGreaterThanOrEqual(3)
    await page.getByTestId('usage-by-key').getByText(people.external.email).waitFor()
    await page.getByTestId('usage-by-key').getByText(adminKeyName).waitFor()
    await screenshot(page, '12-usage')
    // The external's usage holds only their key and their playground run.
    const ext = people.external.page
    await ext.goto('/console/usage?days=7')
    await ext.getByTestId('jobs-chart').waitFor()
    expect(await ext.getByTestId('usage-total-jobs').textContent()).toBe('2')
    expect(await ext.getByTestId('usage-by-key').getByText(adminKeyName).count()).toBe(0)
  })

  it('shows an external only their own keys and jobs, in the UI and on the console API', async () => {
    const page = people.external.page
    await page.goto('/console/keys')
    await page.getByTestId('keys-table').getByText('guest-laptop').waitFor()
    expect(await page.getByTestId('keys-table').getByText(adminKeyName).count()).toBe(0)
    await page.goto('/console/jobs')
    await page.getByTestId('jobs-table').getByText(externalJobId).waitFor()
    expect(await page.getByTestId('jobs-table').getByText(adminJobId).count()).toBe(0)
    await page.goto('/console/members')
    await page.getByText('Your role does not give access to this page.').waitFor()

    const ext = await signedInClient(people.external.email)
    const keys = await ext.call('GET', '/keys')
    expect(keys.body.items.map((k: { name: string }) => k.name)).toEqual(['guest-laptop'])
    const jobs = await ext.call('GET', '/jobs')
    expect(jobs.body.items.some((j: { id: string }) => j.id === adminJobId)).toBe(false)
    expect((await ext.call('GET', `/jobs/${adminJobId}`)).status).toBe(404)
    const staff = await signedInClient(people.admin.email)
    const adminKeyId = (await staff.call('GET', '/keys')).body.items.find(
      (k: { name: string }) => k.name === adminKeyName,
    ).id
    expect((await ext.call('POST', `/keys/${adminKeyId}/revoke`)).status).toBe(404)
    expect((await ext.call('POST', `/keys/${adminKeyId}/secret/reveal`)).status).toBe(404)
    expect((await ext.call('GET', '/members')).status).toBe(403)
    expect((await ext.call('POST', '/workspace/signing-secret/reveal')).status).toBe(403)
    const ownKeyId = keys.body.items[0].id
    expect((await ext.call('PATCH', `/keys/${ownKeyId}`, { rateLimitPerMinute: 5000 })).status).toBe(403)
    expect((await ext.call('POST', '/keys', { name: 'fast', rateLimitPerMinute: 5000 })).status).toBe(403)
    // Staff can raise it.
    expect((await staff.call('PATCH', `/keys/${ownKeyId}`, { rateLimitPerMinute: 5000 })).body.rateLimitPerMinute).toBe(
      5000,
    )
  })

  it('protects the last active admin from demotion and disabling', async () => {
    const page = people.admin.page
    // Other test files may have made admins: step them down so this one is the last.
    const client = await signedInClient(people.admin.email)
    const active = (await client.call('GET', '/members')).body.members.filter(
      (m: { role: string; disabled: boolean }) => m.role === 'admin' && !m.disabled,
    )
    for (const other of active.filter((m: { email: string }) => m.email !== people.admin.email))
      expect((await client.call('PATCH', `/members/${other.id}`, { role: 'member' })).status).toBe(200)
    const admins = (await client.call('GET', '/members')).body.members.filter(
      (m: { role: string; disabled: boolean }) => m.role === 'admin' && !m.disabled,
    )
    expect(admins.map((a: { email: string }) => a.email)).toEqual([people.admin.email])
    await page.goto('/console/members')
    await page.getByLabel(`Role of ${people.admin.email}`).selectOption('member')
    await page.getByText('There must always be at least one active admin').waitFor()
    await screenshot(page, '13-members-last-admin')
    const me = admins[0].id
    expect((await client.call('PATCH', `/members/${me}`, { disabled: true })).status).toBe(409)
    expect((await client.call('PATCH', `/members/${me}`, { role: 'external' })).status).toBe(409)
    // The admin can reset the member's two-factor authentication.
    await page.reload()
    await page.getByRole('button', { name: `Reset two-factor of ${people.member.email}` }).click()
    await page.getByRole('button', { name: 'Reset 2FA' }).click()
    await page.getByText(`Two-factor authentication of ${people.member.email} was reset.`).waitFor()
  })

  it('signs in through the real OpenID provider: allowed domain as member, invited address with its role, others refused', async () => {
    let ctx: BrowserContext | undefined
    let page: Page = undefined as unknown as Page
    // A fresh browser each time: no session at the provider yet, so it asks who you are.
    const viaProvider = async (login: string) => {
      await ctx?.close()
      ctx = await personContext(browser)
      page = await ctx.newPage()
      await page.goto('/console/sign-in')
      if (login.startsWith('oscar')) await screenshot(page, '00-sign-in')
      await page.getByRole('link', { name: 'Continue with Test IdP' }).click()
      await page.locator('input[name=login]').fill(login)
      await page.locator('input[name=password]').fill('anything')
      await page.getByRole('button', { name: 'Sign-in' }).click()
      await page.getByRole('button', { name: 'Continue' }).click()
    }
    await viaProvider(uniqueEmail('oscar', 'example.org'))
    await waitForHeading(page, 'Jobs')
    await expect.poll(async () => (await page.locator('.badge-role').textContent())?.trim()).toBe('member')
    await screenshot(page, '14-oidc-signed-in')
    await page.getByRole('button', { name: 'Sign out' }).click()

    const invited = uniqueEmail('contractor', 'elsewhere.test')
    await invite(people.admin.page, invited, 'external')
    await viaProvider(invited)
    await waitForHeading(page, 'Jobs')
    await expect.poll(async () => (await page.locator('.badge-role').textContent())?.trim()).toBe('external')
    await page.getByRole('button', { name: 'Sign out' }).click()

    await viaProvider(uniqueEmail('stranger', 'elsewhere.test'))
    await page.getByText('not on an allowed domain').waitFor()
    await viaProvider(`unverified.${uniqueEmail('someone', 'example.org')}`)
    await page.getByText('no verified e-mail address').waitFor()
    await ctx?.close()
  })

  it('sets the first password of an identity-provider account only right after signing in there; with passwords off for such accounts, they have none', async () => {
    const ctx = await personContext(browser)
    const page = await ctx.newPage()
    const email = uniqueEmail('olga', 'example.org')
    await page.goto('/console/sign-in')
    await page.getByRole('link', { name: 'Continue with Test IdP' }).click()
    await page.locator('input[name=login]').fill(email)
    await page.locator('input[name=password]').fill('anything')
    await page.getByRole('button', { name: 'Sign-in' }).click()
    await page.getByRole('button', { name: 'Continue' }).click()
    await waitForHeading(page, 'Jobs')
    // What the session itself can do (its cookie and CSRF token, in the page).
    const call = (path: string, body: unknown) =>
      page.evaluate(
        async ({ path, body }) => {
          const me = (await (await fetch('/console/api/session')).json()) as { csrfToken: string }
          const res = await fetch(`/console/api${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrfToken },
            body: JSON.stringify(body),
          })
          return { status: res.status, body: await res.text() }
        },
        { path, body },
      )
    // The same sign-in cookie 10 minutes on (one taken from its owner, say): no first password.
    const cookie = (await ctx.cookies()).find((c) => c.name.endsWith('dutil_session'))!
    const redis = new Redis(inject('redisUrl'))
    const key = `console:session:${createHash('sha256').update(cookie.value).digest('hex')}`
    const age = async (ms: number) => {
      const data = JSON.parse((await redis.get(key))!)
      data.createdAt -= ms
      await redis.set(key, JSON.stringify(data), 'KEEPTTL')
    }
    try {
      await age(10 * 60_000)
      const stale = await call('/account/password', { newPassword: PASSWORD })
      expect(stale.status).toBe(403)
      expect(JSON.parse(stale.body).error.message).toBe(
        'To set a first password, sign in with Test IdP again and set it within 5 minutes.',
      )
      expect((await new ConsoleClient().signIn(email, PASSWORD)).status).toBe(401)
      await age(-10 * 60_000)
      expect((await call('/account/password', { newPassword: PASSWORD })).status).toBe(204)
      expect((await new ConsoleClient().signIn(email, PASSWORD)).status).toBe(200)
      // Passwords off for provider accounts: the password no longer signs in, none can be set.
      await restartGateway({ DUTIL_OIDC_ACCOUNT_PASSWORDS: 'false' })
      try {
        expect((await new ConsoleClient().signIn(email, PASSWORD)).status).toBe(401)
        const off = await call('/account/password', { currentPassword: PASSWORD, newPassword: `${PASSWORD}!` })
        expect(off.status).toBe(403)
        expect(JSON.parse(off.body).error.message).toBe(
          'Accounts that sign in with Test IdP have no password in this workspace.',
        )
      } finally {
        await restartGateway({})
      }
    } finally {
      redis.disconnect()
      await ctx.close()
    }
  })
})

describe('playground form generator, in Chromium', () => {
  it("renders every utility's input schema (enabled or not) as a form that reads back its example input", async () => {
    const ctx = await personContext(browser)
    const page = await ctx.newPage()
    await page.goto('/console/sign-in')
    for (const u of catalog.values()) {
      const schema = JSON.parse(JSON.stringify(u.inputSchema))
      // The console's own module, as the playground loads it (the code runs in the page).
      const read = (await page.evaluate(`(async () => {
        const m = await import('/console/assets/schema-form.js')
        const part = m.schemaForm(${JSON.stringify(schema)}, 'input', 'input', ${JSON.stringify(u.exampleInput)}, true)
        document.body.append(part.el)
        const labelled = [...part.el.querySelectorAll('input, select, textarea')].every((el) => el.labels && el.labels.length > 0)
        return { value: part.read(), labelled }
      })()`)) as { value: unknown; labelled: boolean }
      expect(read.value, u.slug).toEqual(u.exampleInput)
      expect(read.labelled, u.slug).toBe(true)
    }
    await ctx.close()
  })
})

/** A console API session of someone the browser tests made (password sign-in, no TOTP). */
async function signedInClient(email: string): Promise<ConsoleClient> {
  const c = new ConsoleClient()
  const res = await c.signIn(email, PASSWORD)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return c
}
