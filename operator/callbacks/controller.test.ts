import { UtilityJobClient } from '../../platform/utility-job-client.js'
import type { ObjectCache } from '@kubernetes/client-node'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { UtilityJobResource, UtilityJobStatus } from '../../contract/crd-schemas.js'
import { toJobView } from '../../contract/job-view.js'
import type { AttemptOutcome } from './callback-state.js'
import { CallbackController } from './controller.js'
import type { CallbackMessage } from './delivery.js'
import { CALLBACK_SCHEDULE } from './schedule.js'
import type { SigningSecret } from './signing-secrets.js'

const T0 = Date.parse('2026-03-01T10:00:00.000Z')
const NS = 'dutil'

/** An API server stand-in: status replaces check resourceVersion, and the cache sees every write at once. */
class FakeApi {
  readonly objects = new Map<string, UtilityJobResource>()
  writes: UtilityJobResource[] = []
  conflictsToInject = 0
  private rv = 1

  put(uj: UtilityJobResource): void {
    this.objects.set(uj.metadata.name, { ...uj, metadata: { ...uj.metadata, resourceVersion: String(this.rv++) } })
  }

  cache: ObjectCache<UtilityJobResource> = {
    get: (name: string) => this.objects.get(name),
    list: () => [...this.objects.values()],
  }

  custom = {
    replaceNamespacedCustomObjectStatus: async (req: { name: string; body: object }) => {
      const body = req.body as UtilityJobResource
      const stored = this.objects.get(req.name)!
      if (this.conflictsToInject > 0 || body.metadata.resourceVersion !== stored.metadata.resourceVersion) {
        this.conflictsToInject = Math.max(0, this.conflictsToInject - 1)
        throw Object.assign(new Error('Conflict'), { code: 409 })
      }
      expect(body.spec).toEqual(stored.spec)
      this.put({ ...stored, status: body.status })
      this.writes.push(this.objects.get(req.name)!)
      return this.objects.get(req.name)!
    },
    getNamespacedCustomObject: async (req: { name: string }) => this.objects.get(req.name)!,
  }
}

function finishedJob(
  name: string,
  opts: { mode?: 'sync' | 'async'; state?: UtilityJobStatus['state']; callbackUrl?: string | null } = {},
): UtilityJobResource {
  const state = opts.state ?? 'succeeded'
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name, uid: `uid-${name}` },
    spec: {
      jobId: `job_${name.toUpperCase()}`,
      utility: 'split-pdf',
      mode: opts.mode ?? 'async',
      apiKeyId: 'key_01JKEY00000000000000000000',
      apiKeyName: 'k',
      createdAt: new Date(T0 - 5000).toISOString(),
      inputKey: 'in',
      metadata: { ticket: 'T-9' },
      ...(opts.callbackUrl === null ? {} : { callbackUrl: opts.callbackUrl ?? 'https://hooks.example.com/x' }),
    },
    status: {
      state,
      startedAt: new Date(T0 - 4000).toISOString(),
      finishedAt: new Date(T0 - 1000).toISOString(),
      timings: { queueMs: 1000, upstreamMs: 2000, storageMs: 10, totalMs: 4000 },
      result: state === 'succeeded' ? { files: [], extras: { pageCount: 0 } } : null,
      error: state === 'failed' ? { code: 'upstream_rejected', message: 'The file is not a valid PDF.' } : null,
    },
  }
}

function setup(
  replies: Array<AttemptOutcome | (() => Promise<AttemptOutcome>)>,
  secret: SigningSecret | null = { secret: 'whsec_dGVzdA==', source: 'key' },
) {
  const api = new FakeApi()
  let now = T0
  const sent: Array<{ msg: CallbackMessage; statusAtSend: UtilityJobStatus | undefined }> = []
  const controller = new CallbackController({
    namespace: NS,
    utilityJobs: api.cache,
    api: new UtilityJobClient(api.custom as never, NS),
    secrets: { forKey: async () => secret },
    view: async (uj) => toJobView(uj, (key) => ({ url: `https://files/${key}` })),
    send: async (msg) => {
      sent.push({ msg, statusAtSend: api.objects.get('j1')?.status })
      const r = replies[Math.min(sent.length - 1, replies.length - 1)]
      return typeof r === 'function' ? r() : r
    },
    schedule: CALLBACK_SCHEDULE,
    log: pino({ level: 'silent' }),
    now: () => now,
  })
  return { api, controller, sent, advance: (ms: number) => (now += ms), at: () => now }
}

const ok: AttemptOutcome = { kind: 'delivered', statusCode: 200 }
const err500: AttemptOutcome = {
  kind: 'failed',
  statusCode: 500,
  error: 'The receiver answered 500.',
  errorClass: 'http_status',
}

describe('CallbackController', () => {
  it('sends job.succeeded once, with the job view as data, and records the delivery', async () => {
    const { api, controller, sent } = setup([ok])
    api.put(finishedJob('j1'))
    expect(await controller.reconcile('j1')).toBeUndefined()
    expect(sent).toHaveLength(1)
    const body = JSON.parse(sent[0].msg.body)
    expect(body).toMatchObject({ type: 'job.succeeded', timestamp: new Date(T0 - 1000).toISOString() })
    expect(body.data).toMatchObject({
      id: 'job_J1',
      status: 'succeeded',
      metadata: { ticket: 'T-9' },
      callback: { url: 'https://hooks.example.com/x', status: 'pending', attempts: 1 },
    })
    expect(sent[0].msg).toMatchObject({ id: 'job_J1', url: 'https://hooks.example.com/x', secret: 'whsec_dGVzdA==' })
    // The attempt was claimed (counted) before it was sent.
    expect(sent[0].statusAtSend?.callback).toMatchObject({ status: 'pending', attempts: 1 })
    const final = api.objects.get('j1')!.status!
    expect(final.callback).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200, nextAttemptAt: null })
    expect(final.state).toBe('succeeded')
    expect(await controller.reconcile('j1')).toBeUndefined()
    expect(sent).toHaveLength(1)
  })

  it('sends job.failed with the error for a failed job', async () => {
    const { api, controller, sent } = setup([ok])
    api.put(finishedJob('j1', { state: 'failed' }))
    await controller.reconcile('j1')
    expect(JSON.parse(sent[0].msg.body)).toMatchObject({
      type: 'job.failed',
      data: { status: 'failed', error: { code: 'upstream_rejected' }, result: null },
    })
  })

  it('sends nothing for sync, cancelled, unfinished or callback-less jobs', async () => {
    const { api, controller, sent } = setup([ok])
    api.put(finishedJob('s', { mode: 'sync' }))
    api.put(finishedJob('c', { state: 'cancelled' }))
    api.put(finishedJob('r', { state: 'running' }))
    api.put(finishedJob('n', { callbackUrl: null }))
    for (const name of ['s', 'c', 'r', 'n', 'missing']) expect(await controller.reconcile(name)).toBeUndefined()
    expect(sent).toHaveLength(0)
    expect(api.writes).toHaveLength(0)
  })

  it('retries on schedule: not before the due time, then delivers on the third attempt', async () => {
    const { api, controller, sent, advance } = setup([err500, err500, ok])
    api.put(finishedJob('j1'))
    expect(await controller.reconcile('j1')).toEqual({ requeueAfterMs: 10_000 })
    advance(9_999)
    expect(await controller.reconcile('j1')).toEqual({ requeueAfterMs: 1 })
    expect(sent).toHaveLength(1)
    advance(1)
    expect(await controller.reconcile('j1')).toEqual({ requeueAfterMs: 20_000 })
    advance(20_000)
    expect(await controller.reconcile('j1')).toBeUndefined()
    expect(sent).toHaveLength(3)
    expect(new Set(sent.map((s) => s.msg.id))).toEqual(new Set(['job_J1']))
    expect(api.objects.get('j1')!.status!.callback).toMatchObject({ status: 'delivered', attempts: 3, lastError: null })
  })

  it('fails after 8 attempts and leaves the job as it was', async () => {
    const { api, controller, sent, advance } = setup([err500])
    api.put(finishedJob('j1'))
    for (;;) {
      const res = await controller.reconcile('j1')
      if (!res) break
      advance(res.requeueAfterMs!)
    }
    expect(sent).toHaveLength(8)
    const status = api.objects.get('j1')!.status!
    expect(status.callback).toMatchObject({ status: 'failed', attempts: 8, lastStatusCode: 500 })
    expect({ ...status, callback: undefined }).toEqual({ ...finishedJob('j1').status, callback: undefined })
  })

  it('fails a refused destination at once, after one attempt', async () => {
    const { api, controller, sent } = setup([{ kind: 'refused', error: 'not allowed' }])
    api.put(finishedJob('j1'))
    expect(await controller.reconcile('j1')).toBeUndefined()
    expect(sent).toHaveLength(1)
    expect(api.objects.get('j1')!.status!.callback).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'not allowed',
    })
  })

  it('does not send when another writer claimed the attempt first', async () => {
    const { api, controller, sent } = setup([ok])
    api.put(finishedJob('j1'))
    api.conflictsToInject = 1
    expect(await controller.reconcile('j1')).toEqual({ requeueAfterMs: 1000 })
    expect(sent).toHaveLength(0)
  })

  it('records the outcome even when the object changed during the attempt', async () => {
    const { api, controller } = setup([ok])
    api.put(finishedJob('j1'))
    let edited = false
    api.custom.replaceNamespacedCustomObjectStatus = ((orig) => async (req) => {
      const res = await orig(req)
      if (!edited && res.status?.callback?.status === 'pending') {
        edited = true
        // Someone edits the labels while the attempt is in flight: the resourceVersion moves on.
        api.put({ ...res, metadata: { ...res.metadata, labels: { touched: 'yes' } } })
      }
      return res
    })(api.custom.replaceNamespacedCustomObjectStatus)
    await controller.reconcile('j1')
    expect(api.objects.get('j1')!.status!.callback).toMatchObject({ status: 'delivered', attempts: 1 })
    expect(api.objects.get('j1')!.metadata.labels).toEqual({ touched: 'yes' })
  })

  it('after a restart mid-attempt, waits for the claimed schedule and does not repeat the attempt early', async () => {
    const { api, controller, sent, advance } = setup([ok])
    const uj = finishedJob('j1')
    // The previous operator claimed attempt 1 and stopped before recording its outcome.
    uj.status!.callback = {
      status: 'pending',
      attempts: 1,
      nextAttemptAt: new Date(T0 + 20_000).toISOString(),
      lastAttemptAt: new Date(T0).toISOString(),
      lastStatusCode: null,
      lastError: null,
      finishedAt: null,
    }
    api.put(uj)
    advance(3_000)
    expect(await controller.reconcile('j1')).toEqual({ requeueAfterMs: 17_000 })
    expect(sent).toHaveLength(0)
    advance(17_000)
    await controller.reconcile('j1')
    expect(api.objects.get('j1')!.status!.callback).toMatchObject({ status: 'delivered', attempts: 2 })
  })

  it('counts an attempt without a signing secret as failed and retries it', async () => {
    const { api, controller, sent } = setup([ok], null)
    api.put(finishedJob('j1'))
    expect(await controller.reconcile('j1')).toEqual({ requeueAfterMs: 10_000 })
    expect(sent).toHaveLength(0)
    expect(api.objects.get('j1')!.status!.callback).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: expect.stringContaining('signing secret'),
    })
  })

  it('records an attempt that could not be made (e.g. an unusable secret) as failed', async () => {
    const { api, controller } = setup([
      async () => {
        throw new Error('the signing secret is empty')
      },
    ])
    api.put(finishedJob('j1'))
    expect(await controller.reconcile('j1')).toEqual({ requeueAfterMs: 10_000 })
    expect(api.objects.get('j1')!.status!.callback).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: expect.stringContaining('signing secret is empty'),
    })
  })

  it('lists the jobs whose callbacks are still pending', () => {
    const { api, controller } = setup([ok])
    api.put(finishedJob('a'))
    api.put(finishedJob('b', { mode: 'sync' }))
    const delivered = finishedJob('c')
    delivered.status!.callback = {
      status: 'delivered',
      attempts: 1,
      nextAttemptAt: null,
      lastAttemptAt: null,
      lastStatusCode: 200,
      lastError: null,
      finishedAt: null,
    }
    api.put(delivered)
    const added: string[] = []
    controller.enqueuePending({ add: (k: string) => added.push(k) } as never)
    expect(added).toEqual(['a'])
  })
})
