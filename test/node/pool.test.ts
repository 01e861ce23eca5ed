import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BatchV1Api } from '@kubernetes/client-node'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { LABELS } from '../../contract/api-group.js'
import { SEALED_INPUTS_ENTRY } from '../../platform/input-sealing-key.js'
import { SECRET_OBJECTS } from '../../platform/secret-entries.js'
import { objectNameOf } from '../../contract/ids.js'
import { UTILITIES } from '../../runners/catalog.js'
import { api } from '../integration/helpers/api.js'
import { createKey, kubeConfig } from '../integration/helpers/keys.js'
import { REPO_ROOT } from '../platform/platform.js'
import { until } from '../platform/wait-for.js'
import { hostProcessesOfPod, type HostProcess } from '../support/host-processes.js'
import { makePdf } from '../support/pdfs.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'
import { BROWSER_SANDBOX_VALUES, BROWSER_UTILITIES, NS, OOM_LIMIT, SANDBOX_PROFILE } from './chart-values.js'
import { kubectl, kubectlAsync, putFile, renderPageWithPicture, upgradeRelease } from './helpers.js'

/** The pools this file installs: small enough that every rule shows within a few jobs. */
const SIZE = 2
const RESTART_EVERY = 3
const SLUGS = UTILITIES.map((u) => u.slug)
/** The utilities whose runner requests this file lowers (split-pdf's are small on this node already). */
const SMALL = SLUGS.filter((u) => u !== 'split-pdf')

interface PoolPod {
  name: string
  uid: string
  utility: string
  tenant?: string
  ready: boolean
}

/** The pool pods as kubectl lists them (not being deleted). */
function poolPods(utility?: string): PoolPod[] {
  const selector = utility ? `${LABELS.pool}=${utility}` : LABELS.pool
  const list = JSON.parse(kubectl(['-n', NS, 'get', 'pods', '-l', selector, '-o', 'json'])) as {
    items: Array<{
      metadata: { name: string; uid: string; deletionTimestamp?: string; labels: Record<string, string> }
      status: { phase?: string; conditions?: Array<{ type: string; status: string }> }
    }>
  }
  return list.items
    .filter((p) => !p.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(p.status.phase ?? ''))
    .map((p) => ({
      name: p.metadata.name,
      uid: p.metadata.uid,
      utility: p.metadata.labels[LABELS.pool],
      tenant: p.metadata.labels[LABELS.poolTenant],
      ready: (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    }))
}

/** The pool pod a job ran on, as `kubectl get utilityjob` shows it (status.runnerPod). */
function runnerPodOf(jobId: string): string {
  return kubectl(['-n', NS, 'get', 'utilityjob', objectNameOf(jobId), '-o', 'jsonpath={.status.runnerPod}'])
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

/** Every utility in pool mode on the real node: the release upgraded for this file, and back to job mode after. */
describe.skipIf(inject('nodeBlocker'))('every utility in pool mode on a real node', () => {
  const keys: string[] = []
  const inputs: Record<string, Record<string, unknown>> = {}

  beforeAll(async () => {
    await upgradeRelease(
      ...SLUGS.flatMap((u) => [
        `runners.${u}.mode=pool`,
        `runners.${u}.pool.size=${SIZE}`,
        `runners.${u}.pool.spare=1`,
        `runners.${u}.pool.restartEvery=${RESTART_EVERY}`,
      ]),
      // Chromium's own sandbox, with the chart's seccomp profile.
      ...BROWSER_SANDBOX_VALUES,
      // Up to ten pool pods share the 2-core node with the rest: small requests, or some stay Pending.
      ...SMALL.flatMap((u) => [
        `runners.${u}.resources.requests.cpu=50m`,
        `runners.${u}.resources.requests.memory=128Mi`,
        `runners.${u}.resources.limits.cpu=1000m`,
        // A pool pod holds its runtime between jobs: more than the OOM test's limit in job mode.
        `runners.${u}.resources.limits.memory=1Gi`,
      ]),
    )
    await until(
      'a spare pool pod ready for every utility',
      async () => SLUGS.every((u) => poolPods(u).some((p) => p.ready && !p.tenant)),
      180_000,
      500,
    )
    for (let i = 0; i < 2; i++) keys.push((await createKey()).key)
    // The operator's leader says it runs jobs whose input rides with them once the signing Secret
    // exists (the keys just made it): it tries every 5 s.
    await until(
      'the operator says it runs jobs whose input rides with them',
      async () =>
        kubectl(['-n', NS, 'get', 'secret', SECRET_OBJECTS.signing, '-o', 'json']).includes(`"${SEALED_INPUTS_ENTRY}"`),
      30_000,
      500,
    )
    const pdf = await putFile('pool.pdf', await makePdf(2))
    const page = await putFile('pool-page.html', '<h1>Pooled</h1><p>One small page.</p>')
    const zip = await putFile(
      'pool.zip',
      writeZip([fileEntry('a.txt', Buffer.from('a')), fileEntry('b/c.txt', Buffer.from('c'))]),
    )
    const xls = await putFile(
      'pool.xls',
      readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'workbooks', 'libreoffice.xls')),
    )
    const docx = await putFile('pool.docx', readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'documents', 'text.docx')))
    Object.assign(inputs, {
      'html-pdf': { url: page },
      'html-image': { url: page, imageOptions: { width: 400, height: 300 } },
      'office-pdf': { url: docx },
      'split-pdf': { url: pdf },
      'merge-pdf': { files: [{ url: pdf }, { url: pdf }] },
      // With a password: its key reaches the pool pod with the hand-over (docs/adr/0042).
      'edit-pdf': { url: pdf, stamp: { text: 'Pooled' }, info: { title: 'Pool' }, encrypt: { userPassword: 'pooled' } },
      'pdf-info': { url: pdf },
      'zip-files': {
        files: [
          { url: pdf, fileName: 'one.pdf' },
          { url: page, fileName: 'page.html' },
        ],
      },
      'unzip-files': { url: zip },
      'xls-to-xlsx': { url: xls },
    })
  })

  afterAll(async () => {
    await upgradeRelease(
      // The chart's own pool settings again (values.yaml): this file's would outlive it.
      ...SLUGS.flatMap((u) => [
        `runners.${u}.mode=job`,
        `runners.${u}.pool.size=2`,
        `runners.${u}.pool.restartEvery=100`,
      ]),
      ...SMALL.filter((u) => u !== 'xls-to-xlsx').map((u) => `runners.${u}.resources=null`),
      ...BROWSER_UTILITIES.map((u) => `runners.${u}.pod=null`),
      // The release's own (chart-values.ts): the OOM test's limit.
      'runners.xls-to-xlsx.resources.requests.cpu=100m',
      'runners.xls-to-xlsx.resources.requests.memory=32Mi',
      `runners.xls-to-xlsx.resources.limits.memory=${OOM_LIMIT}`,
    )
    // Back in job mode the operator may no longer touch pods: the pools go as the docs say.
    await kubectlAsync(['-n', NS, 'delete', 'pods', '-l', LABELS.pool, '--wait=true'])
  })

  /** The operators' count of runners' storage grants, `scope/source` (only the leader's move). */
  function runnerGrants(): Record<string, number> {
    const pods = JSON.parse(
      kubectl(['-n', NS, 'get', 'pods', '-l', 'app.kubernetes.io/component=operator', '-o', 'json']),
    ) as { items: Array<{ metadata: { name: string }; status: { phase?: string } }> }
    const counted: Record<string, number> = {}
    for (const pod of pods.items.filter((p) => p.status.phase === 'Running')) {
      const text = kubectl(['get', '--raw', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}:8081/proxy/metrics`])
      for (const m of text.matchAll(/^dutil_runner_storage_grants_total\{scope="(\w+)",source="(\w+)"\} (\d+)$/gm))
        counted[`${m[1]}/${m[2]}`] = (counted[`${m[1]}/${m[2]}`] ?? 0) + Number(m[3])
    }
    return counted
  }

  const run = (utility: string, key: string, headers: Record<string, string> = {}, input = inputs[utility]) =>
    api('POST', `/v1/utilities/${utility}`, { key, body: { input }, headers })

  it('runs every utility in a pool pod: no batch Job, the job names its pod, its Events name it too, the files download; a short job is one write, one Event', async () => {
    const batch = kubeConfig().makeApiClient(BatchV1Api)
    for (const utility of SLUGS) {
      const res = await run(utility, keys[0])
      expect(res.status, `${utility}: ${JSON.stringify(res.body)}`).toBe(200)
      expect(res.body.status).toBe('succeeded')
      // pdf-info stores nothing: its facts are its result.
      if (utility === 'pdf-info') expect(res.body.result).toMatchObject({ files: [], pageCount: 2, encrypted: false })
      else {
        if (utility === 'edit-pdf') expect(res.body.result).toMatchObject({ pageCount: 2, encrypted: true })
        expect((await fetch(res.body.result.files[0].url)).status, utility).toBe(200)
      }
      const jobs = await batch.listNamespacedJob({
        namespace: NS,
        labelSelector: `${LABELS.jobId}=${objectNameOf(res.body.id)}`,
      })
      expect(jobs.items, utility).toEqual([])
      const pod = runnerPodOf(res.body.id)
      expect(pod, utility).toMatch(new RegExp(`^dutil-pool-${utility}-[a-z0-9]{8}$`))
      // What kubectl shows of it: its final state, the pod it ran on, its conditions.
      const name = objectNameOf(res.body.id)
      await kubectlAsync(['-n', NS, 'wait', '--for=condition=Succeeded', '--timeout=5s', `utilityjob/${name}`])
      const shown = JSON.parse(kubectl(['-n', NS, 'get', 'utilityjob', name, '-o', 'json'])) as {
        spec: { sealedInput?: string }
        status: {
          startedAt: string
          finishedAt: string
          conditions: Array<{ type: string; status: string; reason: string }>
        }
      }
      // Its small input rode with it, sealed, never stored (docs/adr/0043): the chart's operator
      // said it runs such jobs.
      expect(shown.spec.sealedInput, utility).toMatch(/^v1\./)
      expect(
        shown.status.conditions.find((c) => c.type === 'Admitted'),
        utility,
      ).toMatchObject({
        status: 'True',
        reason: 'PoolPodAssigned',
      })
      await expect
        .poll(() => eventsOf(res.body.id).find((e) => e.reason === 'Succeeded')?.message ?? '', { timeout: 10_000 })
        .toMatch(new RegExp(`^Succeeded in \\d+ ms on pool pod ${pod}: \\d+ files? stored\\.$`))
      const events = eventsOf(res.body.id)
      // A job that ran less than a second wrote its status once, its outcome, and one Event; a
      // longer one may have told its start (the hand-over) too.
      const ranMs = Date.parse(shown.status.finishedAt) - Date.parse(shown.status.startedAt)
      if (ranMs < 1000)
        expect(
          events.map((e) => e.reason),
          `${utility} ran ${ranMs} ms`,
        ).toEqual(['Succeeded'])
      for (const e of events.filter((e) => e.reason !== 'Succeeded'))
        expect(e, utility).toMatchObject({
          reason: 'PoolPodAssigned',
          message: expect.stringMatching(new RegExp(`^Handed to pool runner pod ${pod}, which runs it from now`)),
        })
    }
  })

  it.each(BROWSER_UTILITIES)(
    "%s runs Chromium with its own sandbox where the chart turns it on: the browser's zygote and renderers in user and PID namespaces of their own",
    async (utility) => {
      const res = await run(utility, keys[0])
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const pod = JSON.parse(kubectl(['-n', NS, 'get', 'pod', runnerPodOf(res.body.id), '-o', 'json'])) as {
        metadata: { uid: string }
        spec: { securityContext: { seccompProfile?: { type: string; localhostProfile?: string } } }
      }
      expect(pod.spec.securityContext.seccompProfile).toEqual({ type: 'Localhost', localhostProfile: SANDBOX_PROFILE })
      const procs = hostProcessesOfPod(pod.metadata.uid)
      const runner = procs.find((p) => p.command === 'node')
      expect(runner, JSON.stringify(procs)).toBeDefined()
      // Chromium rewrites its children's command lines into one string: read them joined.
      const line = (p: HostProcess) => p.args.join(' ')
      // The browser is the one without a --type: its zygotes carry its switches too, and which of
      // them /proc lists first depends on how the pids wrapped.
      const browser = procs.find(
        (p) =>
          line(p).includes('--remote-debugging-pipe') && !line(p).startsWith('/bin/sh') && !/--type=/.test(line(p)),
      )
      expect(browser, JSON.stringify(procs)).toBeDefined()
      expect(browser!.args).not.toContain('--no-sandbox')
      // The warm browser's sandboxed processes (its zygotes stay for the pod's life): namespaces the
      // runner and the browser do not share. Without the sandbox every process shares the runner's.
      const sandboxed = procs.filter((p) => /--type=(zygote|renderer)\b/.test(line(p)))
      expect(sandboxed.length, JSON.stringify(procs)).toBeGreaterThan(0)
      const apart = sandboxed.filter((p) => p.userNs !== runner!.userNs && p.pidNs !== runner!.pidNs)
      expect(apart.length, JSON.stringify(sandboxed)).toBeGreaterThan(0)
      expect(browser!.userNs).toBe(runner!.userNs)
    },
  )

  it('keeps LibreOffice warm: one key’s office-pdf jobs, one after another, run on one pod (a protected Word 97 file with its password, which the warm LibreOffice decrypts, then a CSV file)', async () => {
    // Two more than the first test's: within the restart count.
    const documents = [
      {
        url: await putFile('pool.doc', readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'documents', 'encrypted.doc'))),
        password: 'dutil',
      },
      { url: await putFile('pool.csv', 'item,amount\nwidget,=1+1\n') },
    ]
    expect(documents.length).toBe(RESTART_EVERY - 1)
    const pods: string[] = []
    for (const [i, input] of documents.entries()) {
      const res = await run('office-pdf', keys[0], {}, input)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.result).toMatchObject({ pageCount: 1, format: ['doc', 'csv'][i] })
      pods.push(runnerPodOf(res.body.id))
    }
    expect(new Set(pods).size, pods.join(', ')).toBe(1)
  })

  it(`never lets a pod serve a second tenant: two keys taking turns run on pods of their own, each retired after ${RESTART_EVERY} jobs; storage is asked for a grant once per key`, async () => {
    const grantsBefore = runnerGrants()
    const podsOf = new Map<string, string[]>(keys.map((k) => [k, []]))
    for (let i = 0; i < 8; i++) {
      const key = keys[i % 2]
      const res = await run('split-pdf', key)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      podsOf.get(key)!.push(runnerPodOf(res.body.id))
    }
    const [a, b] = keys.map((k) => new Set(podsOf.get(k)))
    expect([...a].filter((p) => b.has(p))).toEqual([])
    // No pod ran more jobs than its restart count; names are never reused.
    const counts = new Map<string, number>()
    for (const p of [...podsOf.get(keys[0])!, ...podsOf.get(keys[1])!]) counts.set(p, (counts.get(p) ?? 0) + 1)
    for (const [pod, n] of counts) expect(n, pod).toBeLessThanOrEqual(RESTART_EVERY)
    // Each live pod names one tenant at most, on its label.
    for (const pod of poolPods('split-pdf')) expect(pod.tenant ?? '').toMatch(/^([0-9a-f]{32})?$/)
    // Each key's split-pdf grant was asked of storage once at most (an earlier test may have
    // asked already), then handed with its next jobs (docs/adr/0049), also to the next pod when a
    // retiring one turned a job away; no job took one of its own.
    const grants = runnerGrants()
    const delta = (k: string) => (grants[k] ?? 0) - (grantsBefore[k] ?? 0)
    expect(delta('tenant/issued')).toBeLessThanOrEqual(2)
    expect(delta('tenant/issued') + delta('tenant/reused')).toBeGreaterThanOrEqual(8)
    expect(delta('job/issued')).toBe(0)
  })

  it('retires a pod in which a process it did not start is alive, before another job runs there', async () => {
    const first = await run('unzip-files', keys[1])
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const pod = runnerPodOf(first.body.id)
    // A process left behind, as a job that escaped its runner would leave it: detached, still running.
    await kubectlAsync([
      '-n',
      NS,
      'exec',
      pod,
      '--',
      'node',
      '-e',
      "require('child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { detached: true, stdio: 'ignore' }).unref()",
    ])
    const next = await run('unzip-files', keys[1])
    expect(next.status, JSON.stringify(next.body)).toBe(200)
    expect(runnerPodOf(next.body.id)).not.toBe(pod)
    await expect
      .poll(() => poolPods('unzip-files').map((p) => p.name), { timeout: 30_000, interval: 250 })
      .not.toContain(pod)
  })

  it('fails a job at its deadline as upstream_timeout (504); that pod retires and a new one serves the next job', async () => {
    const stalled = inject('podFilesUrl').replace(/\/files$/, '/stall')
    const res = await run('html-pdf', keys[0], { 'Dutil-Test-Deadline-Seconds': '3' }, { url: stalled })
    expect(res.status, JSON.stringify(res.body)).toBe(504)
    expect(res.body.error).toMatchObject({ code: 'upstream_timeout' })
    expect(res.body.error.message).toContain('3 s')
    const pod = runnerPodOf(res.body.id)
    const next = await run('html-pdf', keys[0])
    expect(next.status, JSON.stringify(next.body)).toBe(200)
    expect(runnerPodOf(next.body.id)).not.toBe(pod)
  })

  it('fails a job whose pool pod is killed mid-run as upstream_error; the next job runs on another pod', async () => {
    const stalled = inject('podFilesUrl').replace(/\/files$/, '/stall')
    // The key whose html-pdf pod served the last test: a key with no pod in a pool full of pods
    // another key used lately would run as a batch Job (docs/adr/0026), not in a pod.
    const accepted = await api('POST', '/v1/utilities/html-pdf', {
      key: keys[0],
      body: { input: { url: stalled } },
      headers: { Prefer: 'respond-async' },
    })
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202)
    await expect.poll(() => runnerPodOf(accepted.body.id), { timeout: 30_000, interval: 200 }).not.toBe('')
    const victim = runnerPodOf(accepted.body.id)
    await kubectlAsync(['-n', NS, 'delete', 'pod', victim, '--grace-period=0', '--force'])
    await expect
      .poll(async () => (await api('GET', `/v1/jobs/${accepted.body.id}`, { key: keys[0] })).body.status, {
        timeout: 30_000,
        interval: 250,
      })
      .toBe('failed')
    const job = (await api('GET', `/v1/jobs/${accepted.body.id}`, { key: keys[0] })).body
    expect(job.error).toMatchObject({ code: 'upstream_error' })
    expect(job.error.message).toContain('The runner stopped before the job finished')
    const next = await run('html-pdf', keys[0])
    expect(next.status, JSON.stringify(next.body)).toBe(200)
    expect(runnerPodOf(next.body.id)).not.toBe(victim)
  })

  // Last, on the key whose html-pdf pod the test before left idle: no later test counts pods.
  it("reads a key's uploads in its pool pod: a page in the request with its picture as a part, answered as the PDF", async () => {
    const rendered = await renderPageWithPicture(inject('gatewayUrl'), keys[0])
    expect(rendered.res.status, await rendered.res.clone().text()).toBe(200)
    expect(rendered.title).toBe('picture loaded')
    const id = rendered.res.headers.get('dutil-job-id')!
    expect(runnerPodOf(id)).toMatch(/^dutil-pool-html-pdf-/)
    // The picture is the key's upload: another key does not see it.
    const mine = await api('GET', '/v1/files', { key: keys[0] })
    const logo = mine.body.items.find((f: { name: string }) => f.name === 'logo.png')
    expect(logo).toBeDefined()
    expect((await api('GET', `/v1/files/${logo.id}`, { key: keys[1] })).status).toBe(404)
  })
})
