import { BatchV1Api } from '@kubernetes/client-node'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { LABELS } from '../../contract/api-group.js'
import { objectNameOf } from '../../contract/ids.js'
import { until } from '../platform/wait-for.js'
import { FileServer } from '../support/file-server.js'
import { api } from './helpers/api.js'
import { createKey, keyAdmin, kubeConfig } from './helpers/keys.js'
import { databaseClient } from './helpers/database.js'
import { restartGateway } from './helpers/processes.js'

/**
 * One API key against every other (docs/adr/0013): sync runs go through admission; a key alone
 * takes every slot of a utility but the reserve, and while another waits no more than its share.
 * The operator runs with the defaults: zip-files has 8 slots, one in reserve, and a key's share
 * is half of them. The gateway answers sync runs after 6 s here.
 */
const SYNC_WAIT_SECONDS = 6
/** What a key (or owner) alone holds of zip-files' 8 slots: all but the reserve. */
const ALONE = 7
let files: FileServer
let trickle: string

interface Summary {
  id: string
  status: string
  mode: string
}

/** Every job of a key, newest first (the list, page by page). */
async function jobsOf(key: string): Promise<Summary[]> {
  const out: Summary[] = []
  let cursor: string | null = null
  do {
    const page = await api(
      'GET',
      `/v1/jobs?utility=zip-files&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { key },
    )
    expect(page.status).toBe(200)
    out.push(...(page.body.items as Summary[]))
    cursor = page.body.nextCursor as string | null
  } while (cursor)
  return out
}

/** The batch Jobs (runner Jobs) that exist for these job ids. */
async function batchJobsOf(ids: string[]): Promise<string[]> {
  const names = new Set(ids.map(objectNameOf))
  const jobs = await kubeConfig()
    .makeApiClient(BatchV1Api)
    .listNamespacedJob({ namespace: 'dutil', labelSelector: `${LABELS.utility}=zip-files` })
  return jobs.items.map((j) => j.metadata!.labels![LABELS.jobId]).filter((n) => names.has(n))
}

/** A sync zip-files run whose only input never finishes downloading; the client gives up after 2 s. */
async function hangingSyncRun(key: string, idempotencyKey?: string): Promise<void> {
  const body = JSON.stringify({ input: { files: [{ url: trickle, fileName: 'never.bin' }] } })
  const headers: Record<string, string> = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey
  await fetch(`${inject('gatewayUrl')}/v1/utilities/zip-files`, {
    method: 'POST',
    headers,
    body,
    signal: AbortSignal.timeout(2000),
  }).then(
    (res) => res.text(),
    () => undefined,
  )
}

/**
 * Another tenant's small zip-files job, run to its end while `busy` (a hog's jobs) keep going:
 * the job as it ended, and the most of `busy` that had a batch Job at any look meanwhile.
 */
async function otherJobBeside(
  key: string,
  fileName: string,
  busy: () => string[],
): Promise<{ job: { id: string; status: string }; mostRunning: number }> {
  const small = files.add(fileName, Buffer.from('small\n'), 'text/plain')
  const accepted = await api('POST', '/v1/utilities/zip-files/jobs', {
    key,
    body: { input: { files: [{ url: small, fileName: 'small.txt' }] } },
  })
  expect(accepted.status).toBe(202)
  let mostRunning = 0
  let job = accepted.body
  await until(
    "the other tenant's job finished",
    async () => {
      mostRunning = Math.max(mostRunning, (await batchJobsOf(busy())).length)
      job = (await api('GET', `/v1/jobs/${accepted.body.id}?wait=2`, { key })).body
      return job.status !== 'queued' && job.status !== 'running'
    },
    60_000,
    200,
  )
  return { job, mostRunning }
}

beforeAll(async () => {
  files = await new FileServer().start()
  trickle = `${files.url}/trickle?every=20000`
  await restartGateway({ DUTIL_SYNC_WAIT_SECONDS: String(SYNC_WAIT_SECONDS) })
})
afterAll(async () => {
  // The endless downloads end: the hog's runners fail, its queued jobs fail as they start.
  await files.stop()
  await restartGateway({})
})

describe('fair share between owners, and revoked keys', () => {
  it("two keys of one owner hold one share between them; another owner's job succeeds; revoking one key cancels its queued jobs while its running ones go on", async () => {
    // A file server of this test's own: stopping it ends the endless downloads (and the slots).
    const own = await new FileServer().start()
    const endless = `${own.url}/trickle?every=20000`
    const owner = `team-${Math.random().toString(36).slice(2, 8)}`
    const first = await createKey({ name: 'team-a', owner })
    const second = await createKey({ name: 'team-b', owner })
    const other = (await createKey({ name: 'someone-else' })).key
    const submit = (key: string) =>
      api('POST', '/v1/utilities/zip-files/jobs', {
        key,
        body: { input: { files: [{ url: endless, fileName: 'never.bin' }] } },
      })
    const ids = { first: [] as string[], second: [] as string[] }
    // The key no longer reads its jobs once revoked (401): the job record shows them.
    const rows = async (jobIds: string[]) => {
      const db = databaseClient(inject('databaseUrl'))
      try {
        const res = await db.query<{ id: string; state: string }>('SELECT id, state FROM jobs WHERE id = ANY($1)', [
          jobIds,
        ])
        const byId = new Map(res.rows.map((r) => [r.id, r.state]))
        return jobIds.map((id) => byId.get(id))
      } finally {
        await db.end()
      }
    }
    try {
      for (let i = 0; i < 6; i++) {
        for (const [which, key] of [
          ['first', first.key],
          ['second', second.key],
        ] as const) {
          const res = await submit(key)
          expect(res.status).toBe(202)
          ids[which].push(res.body.id)
        }
      }
      const teamIds = [...ids.first, ...ids.second]
      // The owner, alone, fills all of zip-files' 8 slots but the reserve; the rest of its jobs wait.
      await until(
        'the owner holds all but the reserve',
        async () => (await batchJobsOf(teamIds)).length === ALONE,
        30_000,
      )
      const { job, mostRunning } = await otherJobBeside(other, 'owner-small.txt', () => teamIds)
      expect(job.status).toBe('succeeded')
      // Two keys, one owner: never more than 7 of the owner's 12 jobs had a runner; the other owner took the reserve.
      expect(mostRunning).toBe(ALONE)

      // Revoking the first key: its queued jobs are cancelled, its running ones run on.
      const state = async (key: string, id: string) => (await api('GET', `/v1/jobs/${id}`, { key })).body.status
      const before = await Promise.all(ids.first.map((id) => state(first.key, id)))
      const running = ids.first.filter((_, i) => before[i] === 'running')
      const queued = ids.first.filter((_, i) => before[i] === 'queued')
      expect(running.length + queued.length).toBe(6)
      expect(queued.length).toBeGreaterThan(0)
      await keyAdmin().revoke(first.id)
      await until(
        "the revoked key's queued jobs cancelled",
        async () => (await rows(queued)).every((s) => s === 'cancelled'),
        30_000,
        250,
      )
      expect(await rows(running)).toEqual(running.map(() => 'running'))
      expect(await batchJobsOf(queued)).toEqual([])
      // The other key of the owner is untouched: its jobs still run or wait.
      expect((await rows(ids.second)).every((s) => s === 'running' || s === 'queued')).toBe(true)
    } finally {
      await own.stop()
    }
    // The downloads ended: the owner's jobs fail and give their slots back before the next test.
    const teamIds = [...ids.first, ...ids.second]
    await until(
      "the owner's jobs finished",
      async () => (await rows(teamIds)).every((s) => s === 'failed' || s === 'cancelled'),
      90_000,
      500,
    )
  }, 240_000)
})

describe('fair share between API keys', () => {
  const hog = { key: '', ids: [] as string[] }

  it("one key's 24 hanging sync runs hold at most all but the reserve of zip-files' slots; another key's job succeeds meanwhile", async () => {
    hog.key = (await createKey({ name: 'hog' })).key
    const other = (await createKey({ name: 'other' })).key
    // Kept by their Idempotency-Keys (a retry would find them), so they stay after the hang-up.
    await Promise.all(Array.from({ length: 24 }, (_, i) => hangingSyncRun(hog.key, `hog-${i}`)))
    let hogJobs: Summary[] = []
    await until('the 24 hog jobs listed', async () => (hogJobs = await jobsOf(hog.key)).length === 24, 30_000)
    hog.ids = hogJobs.map((j) => j.id)
    expect(hogJobs.every((j) => j.mode === 'sync')).toBe(true)

    const started = Date.now()
    const { job, mostRunning } = await otherJobBeside(other, 'small.txt', () => hog.ids)
    expect(job.status).toBe('succeeded')
    expect(Date.now() - started).toBeLessThan(60_000)
    // Meanwhile the hog's jobs were all still running or waiting, never more than all but the reserve with a Job.
    const now = await jobsOf(hog.key)
    expect(now.filter((j) => j.status === 'running' || j.status === 'queued')).toHaveLength(24)
    expect(now.filter((j) => j.status === 'running').length).toBeLessThanOrEqual(ALONE)
    expect(now.filter((j) => j.status === 'queued').length).toBeGreaterThanOrEqual(24 - ALONE)
    expect(mostRunning).toBeLessThanOrEqual(ALONE)
    expect((await batchJobsOf(hog.ids)).length).toBeLessThanOrEqual(ALONE)
  }, 120_000)

  it('a sync run still waiting for a slot when the sync wait ends answers 202 with the queued job', async () => {
    const res = await api('POST', '/v1/utilities/zip-files', {
      key: hog.key,
      body: { input: { files: [{ url: trickle, fileName: 'never.bin' }] } },
      headers: { 'Idempotency-Key': 'hog-waits' },
    })
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({ mode: 'sync', status: 'queued', startedAt: null, timings: { queueMs: null } })
    expect(res.headers.get('location')).toBe(`/v1/jobs/${res.body.id}`)
    expect(res.headers.get('retry-after')).toBe('5')
    expect(await batchJobsOf([res.body.id])).toEqual([])
  })

  it('a sync run whose client hangs up before its job got a slot is cancelled, never started', async () => {
    const before = new Set((await jobsOf(hog.key)).map((j) => j.id))
    await Promise.all(Array.from({ length: 6 }, () => hangingSyncRun(hog.key)))
    let left: Summary[] = []
    await until(
      'the six runs cancelled',
      async () => {
        left = (await jobsOf(hog.key)).filter((j) => !before.has(j.id))
        return left.length === 6 && left.every((j) => j.status === 'cancelled')
      },
      30_000,
    )
    expect(await batchJobsOf(left.map((j) => j.id))).toEqual([])
    const one = await api('GET', `/v1/jobs/${left[0].id}`, { key: hog.key })
    expect(one.body).toMatchObject({ mode: 'sync', status: 'cancelled', startedAt: null, result: null })
  })
})
