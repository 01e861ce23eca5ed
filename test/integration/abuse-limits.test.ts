import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../platform/wait-for.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { api } from './helpers/api.js'
import { bootstrapAdmin, ConsoleClient, invitePerson, inviteToken, uniqueEmail } from './helpers/console.js'
import { createKey } from './helpers/keys.js'
import { listKeys } from './helpers/storage.js'
import { componentProcess, restartGateway } from './helpers/processes.js'

/**
 * Volume limits on job creation (docs/security.md item 4), tried as a flooding tenant would: a
 * per-key ceiling on queued jobs, per-person playground run limits, and a cap on external
 * people's keys. The gateway runs with small limits for this file, then with its defaults again.
 */
const LIMITS = {
  DUTIL_MAX_QUEUED_JOBS: '8',
  DUTIL_MAX_QUEUED_JOBS_PER_KEY: '5',
  // Owners may hold the whole (small) platform ceiling here; their own ceiling is tried below.
  DUTIL_MAX_QUEUED_SHARE_PER_OWNER: '1',
  DUTIL_PLAYGROUND_RUNS_PER_MINUTE: '3',
  DUTIL_CONSOLE_MAX_KEYS_PER_EXTERNAL: '2',
  DUTIL_CONSOLE_KEYS_PER_DAY: '10',
}
const PASSWORD = 'a long enough passphrase'
let files: FileServer
let pdfUrl: string

const operatorPid = () => componentProcess('operator').pid

beforeAll(async () => {
  files = await new FileServer().start()
  pdfUrl = files.add('one-page.pdf', await makePdf(1))
  await restartGateway(LIMITS)
})
afterAll(async () => {
  await restartGateway({})
  await files.stop()
})

describe('queued jobs per API key', () => {
  it('answers 429 with Retry-After past the per-key ceiling for that key only, and past the platform ceiling for every key; idempotent replays still answer; room frees as jobs start', async () => {
    const flood = await createKey({ name: 'flood' })
    const quiet = await createKey({ name: 'quiet' })
    const submit = (key: string, headers: Record<string, string> = {}) =>
      api('POST', '/v1/utilities/split-pdf/jobs', { key, headers, body: { input: { url: pdfUrl } } })
    // Nothing starts while the operator is paused: every accepted job stays queued.
    process.kill(operatorPid(), 'SIGSTOP')
    let accepted: string[] = []
    // Nothing in storage: a small input rides sealed with its job; a refused request or a lost race stores nothing.
    const inputsBefore = new Set(await listKeys('_jobs/'))
    const newInputs = async () => (await listKeys('_jobs/')).filter((k) => !inputsBefore.has(k)).sort()
    try {
      const first = await submit(flood.key, { 'Idempotency-Key': 'flood-1' })
      expect(first.status).toBe(202)
      const burst = await Promise.all(Array.from({ length: 8 }, () => submit(flood.key)))
      const statuses = burst.map((r) => r.status).sort()
      expect(statuses).toEqual([202, 202, 202, 202, 429, 429, 429, 429])
      for (const r of burst.filter((x) => x.status === 429)) {
        expect(r.body.error.code).toBe('rate_limited')
        expect(r.body.error.message).toContain('5 jobs waiting to start')
        expect(r.headers.get('retry-after')).toBe('5')
      }
      accepted = [first.body.id, ...burst.filter((r) => r.status === 202).map((r) => r.body.id)]
      // A refused request created no job.
      expect(
        (await api('GET', '/v1/jobs?limit=100', { key: flood.key })).body.items.map((j: { id: string }) => j.id).sort(),
      ).toEqual([...accepted].sort())
      // Replaying an accepted request is not a new job: it still answers.
      const replay = await submit(flood.key, { 'Idempotency-Key': 'flood-1' })
      expect(replay.status).toBe(202)
      expect(replay.body.id).toBe(first.body.id)
      expect(await newInputs()).toEqual([])
      // Another key is not held back by the flood.
      const other = await submit(quiet.key)
      expect(other.status).toBe(202)
      // Twelve requests at once with one Idempotency-Key: one job, nothing stored.
      const race = await Promise.all(
        Array.from({ length: 12 }, () => submit(quiet.key, { 'Idempotency-Key': 'race-1' })),
      )
      expect(race.map((r) => r.status)).toEqual(Array(12).fill(202))
      expect(new Set(race.map((r) => r.body.id)).size).toBe(1)
      expect(await newInputs()).toEqual([])
      expect(
        (await api('GET', '/v1/jobs?limit=100', { key: quiet.key })).body.items.map((j: { id: string }) => j.id).sort(),
      ).toEqual([other.body.id, race[0].body.id].sort())
      // The platform-wide ceiling (8 queued here) holds for every key: one more fits, then 429.
      const third = await createKey({ name: 'third' })
      expect((await submit(third.key)).status).toBe(202)
      const full = await submit(third.key)
      expect(full.status).toBe(429)
      expect(full.body.error).toMatchObject({
        code: 'rate_limited',
        message: 'The service has as many jobs waiting to start as it takes; send this one again shortly.',
      })
      expect(full.headers.get('retry-after')).toBe('10')
      expect(await newInputs()).toEqual([])
      expect((await api('GET', '/v1/jobs?limit=100', { key: third.key })).body.items).toHaveLength(1)
    } finally {
      process.kill(operatorPid(), 'SIGCONT')
    }
    await until(
      'the flood has started',
      async () => (await api('GET', '/v1/jobs?status=queued', { key: flood.key })).body.items.length === 0,
      60_000,
      250,
    )
    expect((await submit(flood.key)).status).toBe(202)
  })
})

describe('queued jobs per owner', () => {
  // Room on the platform (40) and one owner's share of it: 6 (0.15 × 40), a key's 5.
  const OWNER_LIMITS = { ...LIMITS, DUTIL_MAX_QUEUED_JOBS: '40', DUTIL_MAX_QUEUED_SHARE_PER_OWNER: '0.15' }
  beforeAll(() => restartGateway(OWNER_LIMITS))
  afterAll(() => restartGateway(LIMITS))

  it("one person's keys and playground runs share one ceiling, so does a key naming them as owner; another owner is not held back", async () => {
    const { link } = bootstrapAdmin(uniqueEmail('owner-admin'))
    const admin = new ConsoleClient()
    expect(
      (
        await admin.call('POST', '/invites/accept', {
          token: inviteToken(link),
          name: 'Owner Admin',
          password: PASSWORD,
        })
      ).status,
    ).toBe(201)
    const { client: person, email } = await invitePerson(admin, 'external', PASSWORD)
    const keyOf = async (name: string) => {
      const made = await person.call('POST', '/keys', { name })
      expect(made.status).toBe(201)
      return made.body.key as string
    }
    const [one, two] = [await keyOf('owner-1'), await keyOf('owner-2')]
    const submit = (key: string) =>
      api('POST', '/v1/utilities/split-pdf/jobs', { key, body: { input: { url: pdfUrl } } })
    process.kill(operatorPid(), 'SIGSTOP')
    const accepted: Array<{ key: string; id: string }> = []
    try {
      for (let i = 0; i < 5; i++) {
        const res = await submit(one)
        expect(res.status).toBe(202)
        accepted.push({ key: one, id: res.body.id })
      }
      // The first key is at its own ceiling (5); the second key has room, the owner one more.
      expect((await submit(one)).body.error.message).toContain('This API key already has 5 jobs')
      const sixth = await submit(two)
      expect(sixth.status).toBe(202)
      accepted.push({ key: two, id: sixth.body.id })
      const refused = await submit(two)
      expect(refused.status).toBe(429)
      expect(refused.body.error).toMatchObject({
        code: 'rate_limited',
        message:
          'Your keys and playground runs together already have 6 jobs waiting to start, the most one owner may have queued; send more once some have started.',
      })
      expect(refused.headers.get('retry-after')).toBe('5')
      // The playground is the same person: refused too.
      const playground = await person.call('POST', '/playground/split-pdf', { input: { url: pdfUrl } })
      expect(playground.status).toBe(429)
      expect(playground.body.error.message).toContain('6 jobs waiting to start')
      // A key an admin made for them (--owner) counts with them; a key of its own does not.
      const named = await createKey({ name: 'named-owner', owner: email.toUpperCase() })
      expect((await submit(named.key)).status).toBe(429)
      const alone = await createKey({ name: 'alone' })
      const free = await submit(alone.key)
      expect(free.status).toBe(202)
      accepted.push({ key: alone.key, id: free.body.id })
    } finally {
      process.kill(operatorPid(), 'SIGCONT')
    }
    // As the jobs start, the owner's room comes back.
    await until(
      "the owner's jobs have started",
      async () =>
        (await Promise.all(accepted.map((a) => api('GET', `/v1/jobs/${a.id}`, { key: a.key })))).every(
          (r) => r.body.status !== 'queued',
        ),
      60_000,
      250,
    )
    expect((await submit(two)).status).toBe(202)
  })
})

describe('console abuse limits', () => {
  let admin: ConsoleClient
  const person = async (role: 'member' | 'external') => (await invitePerson(admin, role, PASSWORD)).client

  beforeAll(async () => {
    const { link } = bootstrapAdmin(uniqueEmail('limits-admin'))
    admin = new ConsoleClient()
    expect(
      (
        await admin.call('POST', '/invites/accept', {
          token: inviteToken(link),
          name: 'Limits Admin',
          password: PASSWORD,
        })
      ).status,
    ).toBe(201)
  })

  it('limits playground runs per person per minute, not per workspace', async () => {
    const member = await person('member')
    const run = (c: ConsoleClient) => c.call('POST', '/playground/split-pdf', { input: { url: pdfUrl } })
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) statuses.push((await run(member)).status)
    // A window may turn over between runs: then all four pass, and a fifth and sixth are needed.
    if (!statuses.includes(429))
      for (let i = 0; i < 4 && !statuses.includes(429); i++) statuses.push((await run(member)).status)
    expect(statuses.slice(0, 3)).toEqual([202, 202, 202])
    expect(statuses).toContain(429)
    const refused = await run(member)
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe('rate_limited')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await run(await person('member'))).status).toBe(202)
  })

  it('caps the active keys of an external person, also when they ask for several at once', async () => {
    const external = await person('external')
    const made = await Promise.all(
      Array.from({ length: 5 }, (_, i) => external.call('POST', '/keys', { name: `ext-${i}` })),
    )
    const statuses = made.map((r) => r.status).sort()
    expect(statuses).toEqual([201, 201, 409, 409, 409])
    expect(made.find((r) => r.status === 409)!.body.error.message).toBe(
      'External members may hold 2 active API keys; revoke one before creating another.',
    )
    // Revoking one makes room for one.
    const one = made.find((r) => r.status === 201)!.body.id
    expect((await external.call('POST', `/keys/${one}/revoke`)).status).toBe(200)
    expect((await external.call('POST', '/keys', { name: 'replacement' })).status).toBe(201)
    expect((await external.call('POST', '/keys', { name: 'one too many' })).status).toBe(409)
    // Members are not capped.
    const member = await person('member')
    for (let i = 0; i < 3; i++) expect((await member.call('POST', '/keys', { name: `member-${i}` })).status).toBe(201)
  })

  it('caps the keys one person may create a day, however many they revoke (churn of the signing Secret)', async () => {
    // The count is per UTC day: not in the last seconds of one.
    const intoDay = Date.now() % 86_400_000
    if (intoDay > 86_400_000 - 15_000) await new Promise((r) => setTimeout(r, 86_400_000 - intoDay + 200))
    const churner = await person('member')
    for (let i = 0; i < 10; i++) {
      const made = await churner.call('POST', '/keys', { name: `churn-${i}` })
      expect(made.status).toBe(201)
      expect((await churner.call('POST', `/keys/${made.body.id}/revoke`)).status).toBe(200)
    }
    const refused = await churner.call('POST', '/keys', { name: 'churn-10' })
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatchObject({
      code: 'rate_limited',
      message: 'A person may create 10 API keys a day; try again tomorrow.',
    })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    // Someone else still can.
    expect((await (await person('member')).call('POST', '/keys', { name: 'fresh' })).status).toBe(201)
  })
})
