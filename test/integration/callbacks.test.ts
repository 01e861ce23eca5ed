import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node'
import { Webhook } from 'standardwebhooks'
import { describe, expect, inject, it } from 'vitest'
import { WORKSPACE_SIGNING_ENTRY } from '../../contract/api-keys.js'
import { SECRET_OBJECTS, SecretEntries } from '../../platform/secret-entries.js'
import { objectNameOf } from '../../contract/ids.js'
import { REPO_ROOT } from '../platform/platform.js'
import { until } from '../platform/wait-for.js'
import type { ReceivedCallback, Reply } from '../support/callback-receiver.js'
import { api, download } from './helpers/api.js'
import { callbackInputs } from './helpers/callback-inputs.js'
import { createJobDirectly, readJob } from './helpers/direct-jobs.js'
import { eventsOf } from './helpers/events.js'
import { databaseClient } from './helpers/database.js'
import { createKey, keyAdmin, kubeConfig } from './helpers/keys.js'
import { whileCordoned } from './helpers/node.js'
import { killComponent, startOperator, waitForOperatorReady } from './helpers/processes.js'

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const inputs = callbackInputs(2)

let paths = 0
/** A receiver path of its own for one test, answering with `replies` in turn. */
function hook(...replies: Reply[]): { path: string; url: string } {
  const path = `/hooks/${++paths}`
  return { path, url: inputs.receiver.url(path, ...replies) }
}

async function startJob(
  key: string,
  callbackUrl: string,
  input = { url: inputs.pdfUrl },
  metadata?: Record<string, unknown>,
): Promise<string> {
  const res = await api('POST', '/v1/utilities/split-pdf/jobs', {
    key,
    body: { input, callbackUrl, ...(metadata ? { metadata } : {}) },
  })
  expect(res.status).toBe(202)
  expect(res.body.callback).toEqual({ url: callbackUrl, status: 'pending', attempts: 0 })
  return res.body.id
}

/** The job's `callback` once it is no longer pending. */
async function settledCallback(
  key: string,
  id: string,
  timeout = 60_000,
): Promise<{ url: string; status: string; attempts: number }> {
  // `until`, not expect.poll: the side-by-side tests below call this too.
  return until(
    `the callback of ${id} settled`,
    async () => {
      const callback = (await api('GET', `/v1/jobs/${id}`, { key })).body.callback
      return callback?.status === 'pending' ? undefined : callback
    },
    timeout,
  )
}

function verify(got: ReceivedCallback, secret: string): any {
  return new Webhook(secret).verify(got.body, got.headers)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const cli = async (...args: string[]) =>
  (
    await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'bin', 'dutil.js'), 'keys', ...args], {
      env: { ...process.env, KUBECONFIG: inject('kubeconfigPath') },
    })
  ).stdout

describe('signed callbacks', () => {
  it('given a finished async job, POSTs one job.succeeded signed with the key secret, data being the job as GET returns it', async () => {
    const { key, signingSecret } = await createKey()
    const { path, url } = hook(200)
    const id = await startJob(key, url, { url: inputs.pdfUrl }, { ticket: 'T-7', nested: { a: [1, 2] } })

    const [got] = await inputs.receiver.waitFor(path, 1)
    expect(got.headers['content-type']).toBe('application/json')
    expect(got.headers['user-agent']).toMatch(/dutil/)
    expect(got.headers['webhook-id']).toBe(id)
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30)
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    const event = verify(got, signingSecret)
    expect(event.type).toBe('job.succeeded')
    expect(event.timestamp).toMatch(ISO_MS)

    expect(await settledCallback(key, id)).toEqual({ url, status: 'delivered', attempts: 1 })
    const fetched = (await api('GET', `/v1/jobs/${id}`, { key })).body
    expect(event.timestamp).toBe(fetched.finishedAt)
    // Same view, except what changes with each read: fresh links, and the callback's own progress.
    const stable = (job: any) => ({
      ...job,
      callback: undefined,
      result: {
        ...job.result,
        files: job.result.files.map((f: any) => ({ ...f, url: undefined, urlExpiresAt: undefined })),
      },
    })
    expect(stable(event.data)).toEqual(stable(fetched))
    expect(event.data.metadata).toEqual({ ticket: 'T-7', nested: { a: [1, 2] } })
    expect(event.data.callback).toEqual({ url, status: 'pending', attempts: 1 })
    expect(event.data.result.pageCount).toBe(2)
    for (const f of event.data.result.files) {
      expect(f.urlExpiresAt).toMatch(ISO_MS)
      expect((await download(f.url)).status).toBe(200)
    }
    await sleep(500)
    expect(inputs.receiver.requests(path)).toHaveLength(1)
    const metrics = await (await fetch(`http://127.0.0.1:${inject('programEnv').DUTIL_OPERATOR_PORT}/metrics`)).text()
    expect(metrics).toMatch(/dutil_callback_attempts_total\{event="job.succeeded",outcome="delivered"\} [1-9]/)
    expect(metrics).toMatch(/dutil_callback_attempt_duration_seconds_count\{outcome="delivered"\} [1-9]/)
    expect(metrics).toMatch(/dutil_callbacks_finished_total\{event="job.succeeded",status="delivered"\} [1-9]/)
  })

  it('given a receiver answering 500 twice, delivers on the third attempt with the same webhook-id, each attempt signed', async () => {
    const { key, signingSecret } = await createKey()
    const { path, url } = hook(500, 500, 200)
    const id = await startJob(key, url)
    expect(await settledCallback(key, id)).toEqual({ url, status: 'delivered', attempts: 3 })
    const got = inputs.receiver.requests(path)
    expect(got).toHaveLength(3)
    for (const g of got) {
      expect(g.headers['webhook-id']).toBe(id)
      expect(verify(g, signingSecret).type).toBe('job.succeeded')
    }
    expect(got.map((g) => verify(g, signingSecret).data.callback.attempts)).toEqual([1, 2, 3])
    const uj = await readJob(objectNameOf(id))
    expect(uj.status?.state).toBe('succeeded')
    expect(uj.status?.callback).toMatchObject({
      status: 'delivered',
      attempts: 3,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
      finishedAt: expect.stringMatching(ISO_MS),
    })
    // kubectl describe tells the same story: two retries with their next attempt time, then the delivery.
    await expect
      .poll(
        async () =>
          (await eventsOf(objectNameOf(id))).filter((e) => e.reason.startsWith('Callback')).map((e) => e.reason),
        { timeout: 10_000 },
      )
      .toEqual(['CallbackRetrying', 'CallbackRetrying', 'CallbackDelivered'])
    const callbackEvents = (await eventsOf(objectNameOf(id))).filter((e) => e.reason.startsWith('Callback'))
    expect(callbackEvents[0]).toMatchObject({
      type: 'Warning',
      message: expect.stringMatching(
        /^Attempt 1 of the job\.succeeded callback to localhost:\d+ failed \(HTTP 500.*\); next attempt at \d{4}-/,
      ),
    })
    expect(callbackEvents[2]).toMatchObject({
      type: 'Normal',
      message: expect.stringContaining('(HTTP 200) on attempt 3'),
    })
    expect(callbackEvents.map((e) => e.message).join('\n')).not.toContain(path)
  })

  // The next four wait out real back-off schedules and stalled receivers, each with a key and a
  // receiver path of its own: they run side by side (the delivery workers serve them all at once).
  it.concurrent(
    'after 8 failed attempts, `dutil callbacks redeliver` sends the same event again with the same webhook-id; the delivery log keeps both rounds',
    async ({ expect }) => {
      const { key, signingSecret } = await createKey()
      const { path, url } = hook(503, 503, 503, 503, 503, 503, 503, 503, 200)
      const id = await startJob(key, url)
      expect(await settledCallback(key, id, 90_000)).toEqual({ url, status: 'failed', attempts: 8 })
      const out = await promisify(execFile)(
        process.execPath,
        [join(REPO_ROOT, 'bin', 'dutil.js'), 'callbacks', 'redeliver', id],
        { env: { ...process.env, KUBECONFIG: inject('kubeconfigPath') } },
      )
      expect(out.stdout).toMatch(new RegExp(`Redelivery of ${id}'s callback asked for at .* \\(round 2\\)`))
      const got = await inputs.receiver.waitFor(path, 9)
      expect(new Set(got.map((g) => g.headers['webhook-id']))).toEqual(new Set([id]))
      expect(verify(got[8], signingSecret).type).toBe('job.succeeded')
      await expect
        .poll(async () => (await readJob(objectNameOf(id))).status?.callback, { timeout: 15_000 })
        .toMatchObject({ status: 'delivered', round: 2, attempts: 1, lastStatusCode: 200 })
      // The delivery log, as the job record keeps it: 8 failures (HTTP 503) in round 1, one delivery in round 2.
      const db = databaseClient(inject('databaseUrl'))
      try {
        const { rows } = await db.query('SELECT callback_log FROM jobs WHERE id = $1', [id])
        const log = rows[0].callback_log as Array<{
          round: number
          attempt: number
          outcome: string
          statusCode: number
          errorClass: string | null
        }>
        expect(log.map((e) => [e.round, e.attempt, e.outcome, e.statusCode, e.errorClass])).toEqual([
          ...Array.from({ length: 7 }, (_, i) => [1, i + 1, 'retrying', 503, 'http_status']),
          [1, 8, 'failed', 503, 'http_status'],
          [2, 1, 'delivered', 200, null],
        ])
      } finally {
        await db.end()
      }
      await expect
        .poll(
          async () =>
            (await eventsOf(objectNameOf(id)))
              .map((e) => e.reason)
              .filter((r) => r === 'CallbackRedelivery' || r === 'CallbackDelivered'),
          { timeout: 10_000 },
        )
        .toEqual(['CallbackRedelivery', 'CallbackDelivered'])
      // A job the cluster no longer holds (archived, or never there) is refused with the reason.
      await expect(
        promisify(execFile)(
          process.execPath,
          [join(REPO_ROOT, 'bin', 'dutil.js'), 'callbacks', 'redeliver', 'job_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
          {
            env: { ...process.env, KUBECONFIG: inject('kubeconfigPath') },
          },
        ),
      ).rejects.toMatchObject({ stderr: expect.stringContaining('left the cluster') })
    },
  )

  it.concurrent(
    'given a receiver answering 302, counts it as a failed attempt and never follows the redirect',
    async ({ expect }) => {
      const { key } = await createKey()
      const { path, url } = hook(302, 200)
      const id = await startJob(key, url)
      expect(await settledCallback(key, id)).toEqual({ url, status: 'delivered', attempts: 2 })
      expect(inputs.receiver.requests(path)).toHaveLength(2)
      expect(inputs.receiver.requests(`/redirected${path}`)).toHaveLength(0)
    },
  )

  it.concurrent(
    'given a receiver that does not answer within 10 s, retries; meanwhile other receivers get theirs at once',
    async ({ expect }) => {
      const { key } = await createKey()
      // Two stalled attempts keep a delivery worker busy for about 20 s.
      const slow = hook('stall', 'stall', 200)
      const fast = hook(200)
      const slowId = await startJob(key, slow.url)
      await inputs.receiver.waitFor(slow.path, 1)
      const fastId = await startJob(key, fast.url)
      const [fastGot] = await inputs.receiver.waitFor(fast.path, 1, 90_000)
      // A stalled attempt was in flight when the other callback went out, and that one did not wait for it.
      expect(inputs.receiver.requests(slow.path).some((r) => r.at <= fastGot.at && fastGot.at < r.at + 10_000)).toBe(
        true,
      )
      const fastJob = (await api('GET', `/v1/jobs/${fastId}`, { key })).body
      expect(fastGot.at - Date.parse(fastJob.finishedAt)).toBeLessThan(5_000)
      expect(await settledCallback(key, fastId)).toMatchObject({ status: 'delivered', attempts: 1 })

      await expect
        .poll(async () => (await readJob(objectNameOf(slowId))).status?.callback?.lastError, {
          timeout: 30_000,
          interval: 200,
        })
        .toMatch(/did not answer within 10 s/)
      await inputs.receiver.waitFor(slow.path, 3, 60_000)
      expect(await settledCallback(key, slowId)).toEqual({ url: slow.url, status: 'delivered', attempts: 3 })
      // Each attempt began once the one before had waited its 10 s, by the sender's own clock (the
      // receiver's times also hold how long each request took to reach it on a busy machine).
      const db = databaseClient(inject('databaseUrl'))
      try {
        const { rows } = await db.query('SELECT callback_log FROM jobs WHERE id = $1', [slowId])
        const log = rows[0].callback_log as Array<{ attempt: number; at: string; errorClass: string | null }>
        expect(log.map((e) => [e.attempt, e.errorClass])).toEqual([
          [1, 'timeout'],
          [2, 'timeout'],
          [3, null],
        ])
        expect(Date.parse(log[1].at) - Date.parse(log[0].at)).toBeGreaterThanOrEqual(10_000)
        expect(Date.parse(log[2].at) - Date.parse(log[1].at)).toBeGreaterThanOrEqual(10_000)
      } finally {
        await db.end()
      }
    },
  )

  it.concurrent(
    'given a receiver that always fails, makes 8 attempts, then marks the callback failed and leaves the job alone',
    async ({ expect }) => {
      const { key } = await createKey()
      const { path, url } = hook(503)
      const id = await startJob(key, url)
      expect(await settledCallback(key, id, 90_000)).toEqual({ url, status: 'failed', attempts: 8 })
      expect(inputs.receiver.requests(path)).toHaveLength(8)
      const gaps = inputs.receiver
        .requests(path)
        .map((g, i, all) => (i ? g.at - all[i - 1].at : 0))
        .slice(1)
      // Back-off doubles (the test platform scales 10 s to 100 ms).
      expect(gaps[6]).toBeGreaterThan(gaps[0] * 8)
      const job = (await api('GET', `/v1/jobs/${id}`, { key })).body
      expect(job).toMatchObject({ status: 'succeeded', error: null })
      expect((await readJob(objectNameOf(id))).status?.callback).toMatchObject({
        lastStatusCode: 503,
        lastError: expect.stringContaining('503'),
      })
      await expect
        .poll(async () => (await eventsOf(objectNameOf(id))).find((e) => e.reason === 'CallbackFailed'), {
          timeout: 10_000,
        })
        .toMatchObject({ type: 'Warning', message: expect.stringContaining('failed for good on attempt 8') })
    },
  )

  it('given a failed job, sends job.failed with the error', async () => {
    const { key, signingSecret } = await createKey()
    const { path, url } = hook(200)
    const id = await startJob(key, url, { url: inputs.notPdfUrl })
    const [got] = await inputs.receiver.waitFor(path, 1)
    const event = verify(got, signingSecret)
    expect(event.type).toBe('job.failed')
    expect(event.data).toMatchObject({
      id,
      status: 'failed',
      result: null,
      error: { code: 'upstream_rejected', message: 'The file is not a valid PDF.' },
    })
    expect(await settledCallback(key, id)).toMatchObject({ status: 'delivered', attempts: 1 })
  })

  it('given a secret rotated while an attempt is in flight, signs the next attempt with the new secret', async () => {
    const created = await createKey()
    let rotated: Promise<string> | undefined
    const { path, url } = hook(async () => {
      rotated = cli('rotate-secret', created.id, '--json').then((out) => JSON.parse(out).signingSecret as string)
      await rotated
      return 500
    }, 200)
    const id = await startJob(created.key, url)
    const [first, second] = await inputs.receiver.waitFor(path, 2)
    const newSecret = await rotated!
    expect(newSecret).toMatch(/^whsec_/)
    expect(newSecret).not.toBe(created.signingSecret)
    expect(verify(first, created.signingSecret).type).toBe('job.succeeded')
    expect(() => verify(second, created.signingSecret)).toThrow()
    expect(verify(second, newSecret).type).toBe('job.succeeded')
    expect(await settledCallback(created.key, id)).toMatchObject({ status: 'delivered', attempts: 2 })
    expect(JSON.parse(await cli('reveal-secret', created.id, '--json'))).toEqual({
      id: created.id,
      signingSecret: newSecret,
      source: 'key',
    })
  })

  it('given a key without a secret of its own (made before per-key secrets), signs with the workspace secret until rotated', async () => {
    const created = await createKey()
    const signing = new SecretEntries(kubeConfig().makeApiClient(CoreV1Api), 'dutil', SECRET_OBJECTS.signing)
    await signing.write({ [objectNameOf(created.id)]: null })
    const workspaceSecret = (await signing.get(WORKSPACE_SIGNING_ENTRY))!
    expect(JSON.parse(await cli('reveal-secret', created.id, '--json'))).toEqual({
      id: created.id,
      signingSecret: workspaceSecret,
      source: 'workspace',
    })

    const { path, url } = hook(200)
    await startJob(created.key, url)
    const [got] = await inputs.receiver.waitFor(path, 1)
    expect(verify(got, workspaceSecret).type).toBe('job.succeeded')

    const own = JSON.parse(await cli('rotate-secret', created.id, '--json')).signingSecret
    const next = hook(200)
    await startJob(created.key, next.url)
    const [again] = await inputs.receiver.waitFor(next.path, 1)
    expect(verify(again, own).type).toBe('job.succeeded')
  })

  it('refuses a callbackUrl at submission when its shape is not allowed', async () => {
    const { key } = await createKey()
    for (const callbackUrl of [
      'http://localhost:1/x',
      'https://user:pass@localhost:1/x',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.1.2.3/x',
      'https://[::ffff:169.254.169.254]/x',
      'https://[fd00::1]/x',
      `https://localhost/${'a'.repeat(2040)}`,
    ]) {
      const res = await api('POST', '/v1/utilities/split-pdf/jobs', {
        key,
        body: { input: { url: inputs.pdfUrl }, callbackUrl },
      })
      expect(res.status, callbackUrl.slice(0, 60)).toBe(400)
      expect(res.body.error.code).toBe('invalid_request')
      expect(res.body.error.details.map((d: any) => d.path)).toContain('callbackUrl')
    }
  })

  it('given a destination refused at delivery time, fails the callback at once after 1 attempt; the job is unaffected', async () => {
    // The gateway turns this URL away, so the job is made directly, as if the gateway had been
    // bypassed: the operator checks every destination again and never connects to it.
    const created = await createKey()
    const uj = await createJobDirectly({
      keyId: created.id,
      mode: 'async',
      callbackUrl: 'https://169.254.169.254/latest/meta-data/',
      inputUrl: inputs.pdfUrl,
    })
    const id = uj.spec.jobId
    expect((await api('GET', `/v1/jobs/${id}?wait=60`, { key: created.key })).body.status).toBe('succeeded')
    expect(await settledCallback(created.key, id)).toEqual({
      url: 'https://169.254.169.254/latest/meta-data/',
      status: 'failed',
      attempts: 1,
    })
    const status = (await readJob(uj.metadata.name)).status!
    expect(status.state).toBe('succeeded')
    expect(status.callback).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastStatusCode: null,
      lastError: expect.stringContaining('169.254.169.254'),
    })
  })

  it('sends nothing for sync jobs and for cancelled jobs', async () => {
    const created = await createKey()
    const sync = hook(200)
    const cancelled = hook(200)
    // A sync job cannot carry a callbackUrl through the gateway; made directly, it still sends nothing.
    const syncJob = await createJobDirectly({
      keyId: created.id,
      mode: 'sync',
      callbackUrl: sync.url,
      inputUrl: inputs.pdfUrl,
    })
    const cancelledId = await whileCordoned(async () => {
      const res = await api('POST', '/v1/utilities/split-pdf/jobs', {
        key: created.key,
        body: { input: { url: inputs.pdfUrl }, callbackUrl: cancelled.url },
      })
      expect(res.status).toBe(202)
      const cancel = await api('POST', `/v1/jobs/${res.body.id}/cancel`, { key: created.key })
      expect(cancel.body.status).toBe('cancelled')
      return res.body.id as string
    })
    expect((await api('GET', `/v1/jobs/${syncJob.spec.jobId}?wait=60`, { key: created.key })).body.status).toBe(
      'succeeded',
    )
    await sleep(3000)
    expect(inputs.receiver.requests(sync.path)).toHaveLength(0)
    expect(inputs.receiver.requests(cancelled.path)).toHaveLength(0)
    expect((await readJob(syncJob.metadata.name)).status?.callback).toBeUndefined()
    expect((await readJob(objectNameOf(cancelledId))).status?.callback).toBeUndefined()
  })

  it('given the operator is restarted between attempts, the next attempt comes on the real schedule (10 s), neither lost nor early', async () => {
    const { key, signingSecret } = await createKey()
    const { path, url } = hook(500, 200)
    try {
      // The real schedule: the operator without the test scale.
      killComponent('operator')
      startOperator({ DUTIL_CALLBACK_DELAY_SCALE: '1' })
      await waitForOperatorReady()
      const id = await startJob(key, url)
      const [first] = await inputs.receiver.waitFor(path, 1)
      await expect
        .poll(async () => (await readJob(objectNameOf(id))).status?.callback?.lastStatusCode, {
          timeout: 10_000,
          interval: 100,
        })
        .toBe(500)
      expect((await readJob(objectNameOf(id))).status?.callback).toMatchObject({ status: 'pending', attempts: 1 })

      killComponent('operator')
      await sleep(1000)
      startOperator({ DUTIL_CALLBACK_DELAY_SCALE: '1' })
      await waitForOperatorReady()
      expect(inputs.receiver.requests(path)).toHaveLength(1) // a restart does not repeat the attempt early

      const [, second] = await inputs.receiver.waitFor(path, 2, 30_000)
      expect(second.at - first.at).toBeGreaterThanOrEqual(10_000)
      expect(second.at - first.at).toBeLessThan(30_000) // on time, give or take a loaded machine
      expect(verify(second, signingSecret).data.callback.attempts).toBe(2)
      expect(await settledCallback(key, id)).toEqual({ url, status: 'delivered', attempts: 2 })
      await sleep(500)
      expect(inputs.receiver.requests(path)).toHaveLength(2)
    } finally {
      killComponent('operator')
      startOperator()
      await waitForOperatorReady()
    }
  })
})

describe('signing secrets of revoked keys', () => {
  it('a revoked key past the retention loses its entry and then its ApiKey object; a key revoked today keeps its object', async () => {
    killComponent('operator')
    startOperator({ DUTIL_RETENTION_SWEEP_SECONDS: '1' })
    await waitForOperatorReady()
    try {
      const custom = kubeConfig().makeApiClient(CustomObjectsApi)
      const exists = async (keyId: string) =>
        (
          (await custom.listNamespacedCustomObject({
            group: 'dutil.io',
            version: 'v1alpha1',
            namespace: 'dutil',
            plural: 'apikeys',
          })) as { items: Array<{ spec: { keyId: string } }> }
        ).items.some((k) => k.spec.keyId === keyId)
      const old = await createKey({ name: 'revoked-long-ago' })
      const recent = await createKey({ name: 'revoked-today' })
      // Revoked 91 days ago (the default retention is 90 days), and just now.
      await keyAdmin().revoke(old.id, Date.now() - 91 * 86_400_000)
      await keyAdmin().revoke(recent.id)
      await expect.poll(() => exists(old.id), { timeout: 15_000, interval: 250 }).toBe(false)
      const signing = new SecretEntries(kubeConfig().makeApiClient(CoreV1Api), 'dutil', SECRET_OBJECTS.signing)
      expect((await signing.all())[objectNameOf(old.id)]).toBeUndefined()
      // Another two sweeps: the recent one's entry goes (it has no jobs), its object stays.
      await new Promise((r) => setTimeout(r, 2500))
      expect(await exists(recent.id)).toBe(true)
      expect((await signing.all())[objectNameOf(recent.id)]).toBeUndefined()
    } finally {
      killComponent('operator')
      startOperator()
      await waitForOperatorReady()
    }
  })

  it("are removed once the key's last callback settled, never replaced by the workspace secret; other entries stay", async () => {
    const signing = new SecretEntries(kubeConfig().makeApiClient(CoreV1Api), 'dutil', SECRET_OBJECTS.signing)
    // The leader sweeps every second here (the chart: DUTIL_RETENTION_SWEEP_SECONDS, hourly).
    killComponent('operator')
    startOperator({ DUTIL_RETENTION_SWEEP_SECONDS: '1' })
    await waitForOperatorReady()
    try {
      const busy = await createKey({ name: 'revoked-busy' })
      const idle = await createKey({ name: 'revoked-idle' })
      const active = await createKey({ name: 'active' })
      let open = false
      const { path, url } = hook(...Array.from({ length: 8 }, () => () => (open ? 200 : 503)))
      const id = await startJob(busy.key, url)
      await inputs.receiver.waitFor(path, 1)
      await keyAdmin().revoke(busy.id)
      await keyAdmin().revoke(idle.id)
      const entry = async (keyId: string) => (await signing.all())[objectNameOf(keyId)]
      // The idle key's entry goes; the busy one stays while its callback is still being delivered.
      await expect.poll(() => entry(idle.id), { timeout: 10_000, interval: 250 }).toBeUndefined()
      expect((await readJob(objectNameOf(id))).status?.callback?.status).toBe('pending')
      expect(await entry(busy.id)).toBe(busy.signingSecret)
      open = true
      // (The key is revoked: the job is read from the cluster, not through the API.)
      await expect
        .poll(async () => (await readJob(objectNameOf(id))).status?.callback?.status, {
          timeout: 30_000,
          interval: 200,
        })
        .toBe('delivered')
      const delivered = inputs.receiver.requests(path).at(-1)!
      expect(verify(delivered, busy.signingSecret).type).toBe('job.succeeded')
      await expect.poll(() => entry(busy.id), { timeout: 10_000, interval: 250 }).toBeUndefined()
      expect(await entry(active.id)).toBe(active.signingSecret)
      expect(await signing.get(WORKSPACE_SIGNING_ENTRY)).toMatch(/^whsec_/)
      // Nothing reveals or signs with the workspace secret in its place.
      await expect(cli('reveal-secret', busy.id)).rejects.toThrow(/is revoked: it has no signing secret any more/)
      const sent = inputs.receiver.requests(path).length
      await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'bin', 'dutil.js'), 'callbacks', 'redeliver', id], {
        env: { ...process.env, KUBECONFIG: inject('kubeconfigPath') },
      })
      await expect
        .poll(async () => (await readJob(objectNameOf(id))).status?.callback, { timeout: 15_000 })
        .toMatchObject({
          status: 'failed',
          round: 2,
          lastError: 'No signing secret exists for this API key or the workspace.',
        })
      expect(inputs.receiver.requests(path)).toHaveLength(sent)
    } finally {
      killComponent('operator')
      startOperator()
      await waitForOperatorReady()
    }
  })
})
