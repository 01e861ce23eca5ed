import { BatchV1Api } from '@kubernetes/client-node'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { LABELS } from '../../contract/api-group.js'
import { objectNameOf } from '../../contract/ids.js'
import { api } from '../integration/helpers/api.js'
import { until } from '../platform/wait-for.js'
import { createKey, kubeConfig } from '../integration/helpers/keys.js'
import { NS } from './chart-values.js'
import { kubectl, kubectlAsync, putFile, upgradeRelease } from './helpers.js'

/** The pool this file installs: small enough that every rule shows within a few jobs. */
const SIZE = 2
const RESTART_EVERY = 3
/** Browsers per pool pod: 4 warm in all, so a fifth key makes one start afresh. */
const BROWSERS = 2
const POOL_SELECTOR = `${LABELS.pool}=html-pdf`

interface PodLine {
  msg: string
  slot?: number
  jobId?: string
  tenant?: string
  why?: string
  fresh?: boolean
}

/** The pool pods as kubectl lists them: name, uid, ready. */
function poolPods(): Array<{ name: string; uid: string; ready: boolean }> {
  const list = JSON.parse(kubectl(['-n', NS, 'get', 'pods', '-l', POOL_SELECTOR, '-o', 'json'])) as {
    items: Array<{
      metadata: { name: string; uid: string; deletionTimestamp?: string }
      status: { conditions?: Array<{ type: string; status: string }> }
    }>
  }
  return list.items
    .filter((p) => !p.metadata.deletionTimestamp)
    .map((p) => ({
      name: p.metadata.name,
      uid: p.metadata.uid,
      ready: (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    }))
}

/** The pool pod a job was handed to, as `kubectl get utilityjob` shows it (status.runnerPod). */
function runnerPodOf(jobId: string): string {
  return kubectl(['-n', NS, 'get', 'utilityjob', objectNameOf(jobId), '-o', 'jsonpath={.status.runnerPod}'])
}

/** A pool pod's log, the runner's JSON lines. */
function podLog(name: string): PodLine[] {
  return kubectl(['-n', NS, 'logs', name])
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as PodLine)
}

/** The job's Events as `kubectl describe` shows them: reason and note. */
function eventsOf(jobId: string): Array<{ reason: string; message: string }> {
  const out = JSON.parse(
    kubectl([
      '-n',
      NS,
      'get',
      'events',
      '--field-selector',
      `involvedObject.name=${objectNameOf(jobId)}`,
      '-o',
      'json',
    ]),
  ) as { items: Array<{ reason: string; message: string }> }
  return out.items
}

/** Pool mode on the real node: the release upgraded to it for this file, and back to job mode after. */
describe.skipIf(inject('nodeBlocker'))('html-pdf in pool mode on a real node', () => {
  const keys: string[] = []
  let page = ''

  beforeAll(async () => {
    await upgradeRelease(
      'runners.html-pdf.mode=pool',
      `runners.html-pdf.pool.size=${SIZE}`,
      `runners.html-pdf.pool.restartEvery=${RESTART_EVERY}`,
      `runners.html-pdf.pool.browsers=${BROWSERS}`,
    )
    await until(`${SIZE} pool pods ready`, async () => poolPods().filter((p) => p.ready).length === SIZE, 120_000, 500)
    for (let i = 0; i < 5; i++) keys.push((await createKey()).key)
    page = await putFile('pool-page.html', '<h1>Pooled</h1><p>One small page.</p>')
  })

  afterAll(async () => {
    await upgradeRelease('runners.html-pdf.mode=job')
    // Back in job mode the operator may no longer touch pods: the pool goes as the docs say.
    await kubectlAsync(['-n', NS, 'delete', 'pods', '-l', POOL_SELECTOR, '--wait=true'])
  })

  const render = (key: string, headers: Record<string, string> = {}, url = page) =>
    api('POST', '/v1/utilities/html-pdf', { key, body: { input: { url } }, headers })

  it('renders in a pool pod: no batch Job, an Event naming the pod, the PDF downloads', async () => {
    const res = await render(keys[0])
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ status: 'succeeded' })
    const pdf = await fetch(res.body.result.files[0].url)
    expect(pdf.status).toBe(200)
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-')
    const jobs = await kubeConfig()
      .makeApiClient(BatchV1Api)
      .listNamespacedJob({ namespace: NS, labelSelector: `${LABELS.jobId}=${objectNameOf(res.body.id)}` })
    expect(jobs.items).toEqual([])
    await expect
      .poll(() => eventsOf(res.body.id).map((e) => e.reason), { timeout: 10_000 })
      .toEqual(expect.arrayContaining(['PoolPodAssigned', 'Started', 'Succeeded']))
    const assigned = eventsOf(res.body.id).find((e) => e.reason === 'PoolPodAssigned')!
    const pod = runnerPodOf(res.body.id)
    expect(poolPods().map((p) => p.name)).toContain(pod)
    expect(assigned.message).toBe(`Handed to pool runner pod ${pod} (time limit 900 s).`)
  })

  it(`serves one API key per browser between its starts, and starts a browser afresh every ${RESTART_EVERY} jobs`, async () => {
    const [a, b, c, d, e] = keys
    const order = [a, a, a, a, b, b, c, d, e, a]
    for (const key of order) {
      const res = await render(key)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
    }
    const why = new Set<string>()
    let jobs = 0
    for (const pod of poolPods()) {
      // Per browser (warm slot): the tenant it serves since its start, and its jobs since then.
      const browsers = new Map<number, { tenant?: string; since: number }>()
      for (const line of podLog(pod.name)) {
        if (line.msg === 'browser started') browsers.set(line.slot!, { since: 0 })
        else if (line.msg === 'warm state started afresh') why.add(line.why!)
        else if (line.msg === 'job started') {
          jobs++
          const b = browsers.get(line.slot!)!
          b.since++
          // Every job since the browser started is the same tenant's, and no more than the restart count.
          if (b.tenant !== undefined) expect(line.tenant, `${pod.name}: ${line.jobId}`).toBe(b.tenant)
          b.tenant = line.tenant
          expect(b.since).toBeLessThanOrEqual(RESTART_EVERY)
        }
      }
    }
    expect(jobs).toBeGreaterThanOrEqual(order.length)
    // The fourth job of one key in a row; a fifth key (and the first again) with all four browsers warm for others.
    expect([...why]).toEqual(expect.arrayContaining(['jobs', 'tenant']))
  })

  it('fails a job at its deadline as upstream_timeout (504); the pod stays and serves the next job', async () => {
    const before = poolPods()
    const stalled = inject('podFilesUrl').replace(/\/files$/, '/stall')
    const res = await render(keys[0], { 'Dutil-Test-Deadline-Seconds': '3' }, stalled)
    expect(res.status, JSON.stringify(res.body)).toBe(504)
    expect(res.body.error).toMatchObject({ code: 'upstream_timeout' })
    expect(res.body.error.message).toContain('3 s')
    const next = await render(keys[0])
    expect(next.status, JSON.stringify(next.body)).toBe(200)
    // The runner ended it: no pod was deleted.
    expect(
      poolPods()
        .map((p) => p.uid)
        .sort(),
    ).toEqual(before.map((p) => p.uid).sort())
  })

  it('fails a job whose pool pod is killed mid-run as upstream_error; the pool makes a new pod, which serves the next job', async () => {
    const stalled = inject('podFilesUrl').replace(/\/files$/, '/stall')
    const accepted = await api('POST', '/v1/utilities/html-pdf', {
      key: keys[1],
      body: { input: { url: stalled } },
      headers: { Prefer: 'respond-async' },
    })
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202)
    await expect.poll(() => runnerPodOf(accepted.body.id), { timeout: 15_000, interval: 200 }).not.toBe('')
    const victim = poolPods().find((p) => p.name === runnerPodOf(accepted.body.id))!
    await kubectlAsync(['-n', NS, 'delete', 'pod', victim.name, '--grace-period=0', '--force'])
    await expect
      .poll(async () => (await api('GET', `/v1/jobs/${accepted.body.id}`, { key: keys[1] })).body.status, {
        timeout: 30_000,
        interval: 250,
      })
      .toBe('failed')
    const job = (await api('GET', `/v1/jobs/${accepted.body.id}`, { key: keys[1] })).body
    expect(job.error).toMatchObject({ code: 'upstream_error' })
    expect(job.error.message).toContain('The runner stopped before the job finished')
    // The pool is whole again, with a new pod in the killed one's place.
    await expect.poll(() => poolPods().filter((p) => p.ready).length, { timeout: 120_000, interval: 500 }).toBe(SIZE)
    expect(poolPods().map((p) => p.uid)).not.toContain(victim.uid)
    const next = await render(keys[1])
    expect(next.status, JSON.stringify(next.body)).toBe(200)
  })
})
