import { SECRET_OBJECTS } from '../../platform/secret-entries.js'
import { execFile, execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node'
import { describe, expect, inject, it } from 'vitest'
import { hashApiKey } from '../../contract/api-keys.js'
import { LABELS } from '../../contract/api-group.js'
import { objectNameOf } from '../../contract/ids.js'
import { BIN_DIR, REPO_ROOT } from '../platform/platform.js'
import { api } from './helpers/api.js'
import { eventsOf } from './helpers/events.js'
import { keyAdmin, kubeConfig } from './helpers/keys.js'
import { makePdf } from '../support/pdfs.js'
import { killComponent, startOperator } from './helpers/processes.js'
import { jobInputs } from './helpers/job-inputs.js'

const inputs = jobInputs()
const { files } = inputs

const kubectl = (...args: string[]) =>
  execFileSync(join(BIN_DIR, 'kubectl'), ['--kubeconfig', inject('kubeconfigPath'), ...args], { encoding: 'utf8' })

describe('operator', () => {
  it('given the operator is killed while a job runs, after a restart there is exactly one Job and the job succeeds', async () => {
    files.add('slow.pdf', await makePdf(4))
    const res = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key: inputs.key,
      body: { input: { url: `${files.url}/slow/slow.pdf?ms=4000` } },
    })
    expect(res.status).toBe(202)
    const id = res.body.id
    await expect
      .poll(async () => (await api('GET', `/v1/jobs/${id}`, { key: inputs.key })).body.status, {
        timeout: 30_000,
        interval: 100,
      })
      .toBe('running')

    killComponent('operator')
    await new Promise((r) => setTimeout(r, 5000)) // the runner finishes while no operator watches
    startOperator()

    const done = await api('GET', `/v1/jobs/${id}?wait=60`, { key: inputs.key })
    expect(done.body.status).toBe('succeeded')
    expect(done.body.result.pageCount).toBe(4)
    const jobs = await kubeConfig()
      .makeApiClient(BatchV1Api)
      .listNamespacedJob({ namespace: 'dutil', labelSelector: `${LABELS.jobId}=${objectNameOf(id)}` })
    expect(jobs.items).toHaveLength(1)
    expect(jobs.items[0].metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'UtilityJob',
      name: objectNameOf(id),
      controller: true,
    })
    expect(jobs.items[0].spec?.template.spec?.automountServiceAccountToken).toBe(false)
  })

  it('given a run past its time limit, the Job controller stops it and the job fails as upstream_timeout (504)', async () => {
    const res = await api('POST', '/v1/utilities/split-pdf', {
      key: inputs.key,
      body: { input: { url: `${files.url}/stall` } },
      headers: { 'Dutil-Test-Deadline-Seconds': '3' },
    })
    expect(res.status).toBe(504)
    expect(res.body).toMatchObject({ status: 'failed', error: { code: 'upstream_timeout' } })
    expect(res.body.error.message).toContain('3 s')
    const jobs = await kubeConfig()
      .makeApiClient(BatchV1Api)
      .listNamespacedJob({ namespace: 'dutil', labelSelector: `${LABELS.jobId}=${objectNameOf(res.body.id)}` })
    expect(jobs.items[0].spec?.activeDeadlineSeconds).toBe(3)
    // The Job controller deleted the pod at the deadline and the node agent terminated it.
    await expect
      .poll(
        async () => {
          const pods = await kubeConfig()
            .makeApiClient(CoreV1Api)
            .listNamespacedPod({ namespace: 'dutil', labelSelector: `${LABELS.jobId}=${objectNameOf(res.body.id)}` })
          return pods.items.every((p) => p.status?.phase === 'Failed' || p.metadata?.deletionTimestamp)
        },
        { timeout: 30_000 },
      )
      .toBe(true)
  })

  it('kubectl get utilityjobs lists jobs with id, utility, mode and status columns', async () => {
    const url = files.add('k.pdf', await makePdf(1))
    const res = await api('POST', '/v1/utilities/split-pdf', { key: inputs.key, body: { input: { url } } })
    expect(res.status).toBe(200)
    const out = kubectl('get', 'utilityjobs', '-n', 'dutil')
    const [header] = out.split('\n')
    expect(header).toMatch(/NAME\s+JOB ID\s+UTILITY\s+MODE\s+STATUS\s+ERROR\s+PROGRESS\s+DURATION-MS\s+AGE/)
    const line = out.split('\n').find((l) => l.includes(res.body.id))
    expect(line).toMatch(new RegExp(`${objectNameOf(res.body.id)}\\s+${res.body.id}\\s+split-pdf\\s+sync\\s+succeeded`))
  })
})

describe('Kubernetes-native status', () => {
  const kubectlAsync = (...args: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile(
        join(BIN_DIR, 'kubectl'),
        ['--kubeconfig', inject('kubeconfigPath'), ...args],
        { encoding: 'utf8' },
        (err, out, errOut) => (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out)),
      ),
    )

  it('kubectl wait --for=condition=Succeeded returns when the job succeeds; describe shows its conditions and Events; -o wide adds key and queue time', async () => {
    files.add('w.pdf', await makePdf(3))
    const res = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key: inputs.key,
      body: { input: { url: `${files.url}/slow/w.pdf?ms=1500` } },
    })
    expect(res.status).toBe(202)
    const name = objectNameOf(res.body.id)
    const succeeded = kubectlAsync(
      'wait',
      '-n',
      'dutil',
      '--for=condition=Succeeded',
      '--timeout=60s',
      `utilityjob/${name}`,
    )
    // Admitted (its batch Job exists) well before it succeeds.
    expect(
      await kubectlAsync('wait', '-n', 'dutil', '--for=condition=Admitted', '--timeout=30s', `utilityjob/${name}`),
    ).toContain('condition met')
    expect(await succeeded).toContain('condition met')
    expect((await api('GET', `/v1/jobs/${res.body.id}`, { key: inputs.key })).body.status).toBe('succeeded')

    const uj = JSON.parse(kubectl('get', 'utilityjob', name, '-n', 'dutil', '-o', 'json'))
    const conditions = Object.fromEntries(uj.status.conditions.map((c: { type: string }) => [c.type, c]))
    expect(Object.keys(conditions).sort()).toEqual(['Admitted', 'Failed', 'Running', 'Succeeded'])
    expect(conditions.Admitted).toMatchObject({
      status: 'True',
      reason: 'JobCreated',
      observedGeneration: uj.metadata.generation,
    })
    expect(conditions.Succeeded).toMatchObject({
      status: 'True',
      reason: 'Succeeded',
      message: 'The job succeeded: 3 files stored.',
    })
    expect(conditions.Running).toMatchObject({ status: 'False', reason: 'Succeeded' })
    expect(conditions.Failed).toMatchObject({ status: 'False' })
    // The condition changed when the job finished, not at every write.
    expect(Date.parse(conditions.Admitted.lastTransitionTime)).toBeLessThanOrEqual(
      Date.parse(conditions.Succeeded.lastTransitionTime),
    )

    await expect
      .poll(async () => (await eventsOf(name)).map((e) => e.reason), { timeout: 10_000 })
      .toEqual(['JobCreated', 'Started', 'Succeeded'])
    const described = kubectl('describe', 'utilityjob', name, '-n', 'dutil')
    expect(described).toMatch(
      /Events:[\s\S]*Normal\s+JobCreated[\s\S]*Created batch Job[\s\S]*Normal\s+Started[\s\S]*Normal\s+Succeeded\s+.*Succeeded in \d+ ms: 3 files stored\./,
    )
    expect(described).toContain('dutil.io/operator')

    const wide = kubectl('get', 'utilityjob', name, '-n', 'dutil', '-o', 'wide')
    expect(wide.split('\n')[0]).toMatch(/STATUS\s+ERROR\s+PROGRESS\s+DURATION-MS\s+KEY\s+QUEUE-MS\s+CALLBACK\s+AGE/)
    expect(wide.split('\n')[1]).toMatch(/succeeded\s+3\/3 pages\s+\d+\s+\S+\s+\d+\s+/)
  })

  it('kubectl wait --for=condition=Failed returns for a failed job, with the error code as the reason and a Warning event', async () => {
    const url = files.add('not-a.pdf', Buffer.from('<html>not a pdf</html>'), 'text/html')
    const res = await api('POST', '/v1/utilities/split-pdf/jobs', { key: inputs.key, body: { input: { url } } })
    const name = objectNameOf(res.body.id)
    expect(
      await kubectlAsync('wait', '-n', 'dutil', '--for=condition=Failed', '--timeout=60s', `utilityjob/${name}`),
    ).toContain('condition met')
    const uj = JSON.parse(kubectl('get', 'utilityjob', name, '-n', 'dutil', '-o', 'json'))
    const failed = uj.status.conditions.find((c: { type: string }) => c.type === 'Failed')
    expect(failed).toMatchObject({ status: 'True', reason: 'UpstreamRejected', message: uj.status.error.message })
    expect(uj.status.conditions.find((c: { type: string }) => c.type === 'Succeeded')).toMatchObject({
      status: 'False',
      reason: 'Failed',
    })
    await expect
      .poll(async () => (await eventsOf(name)).find((e) => e.type === 'Warning'), { timeout: 10_000 })
      .toMatchObject({ reason: 'UpstreamRejected', message: `upstream_rejected: ${uj.status.error.message}` })
  })
})

describe('dutil keys CLI', () => {
  const cli = (...args: string[]) =>
    execFileSync(process.execPath, [join(REPO_ROOT, 'bin', 'dutil.js'), 'keys', ...args], {
      encoding: 'utf8',
      env: { ...process.env, KUBECONFIG: inject('kubeconfigPath') },
    })

  it('creates a key shown once, stores only its hash, and keeps the signing secret in a Secret', async () => {
    const created = JSON.parse(
      cli(
        'create',
        '--name',
        'laptop',
        '--json',
        '--utilities',
        'split-pdf,zip-files',
        '--rate-limit',
        '100',
        '--expires-in-days',
        '30',
      ),
    )
    expect(Object.keys(created).sort()).toEqual(['id', 'key', 'signingSecret'])
    expect(created.id).toMatch(/^key_[0-9A-HJKMNP-TV-Z]{26}$/)
    expect(created.key).toMatch(/^du_live_[0-9a-f]{48}$/)
    expect(created.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)

    const stored = JSON.parse(kubectl('get', 'apikeys', objectNameOf(created.id), '-n', 'dutil', '-o', 'json'))
    expect(JSON.stringify(stored)).not.toContain(created.key)
    expect(stored.spec).toMatchObject({
      hash: hashApiKey(created.key),
      prefix: created.key.slice(0, 16),
      name: 'laptop',
      utilities: ['split-pdf', 'zip-files'],
      rateLimitPerMinute: 100,
    })
    expect(Date.parse(stored.spec.expiresAt) - Date.parse(stored.spec.createdAt)).toBe(30 * 86_400_000)
    // The signing secret is the key's entry in the one signing Secret (docs/adr/0012).
    expect(stored.spec.signingSecretName).toBe(SECRET_OBJECTS.signing)
    const secret = await kubeConfig()
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ name: SECRET_OBJECTS.signing, namespace: 'dutil' })
    expect(Buffer.from(secret.data![objectNameOf(created.id)], 'base64').toString()).toBe(created.signingSecret)

    const res = await api('GET', '/v1/utilities', { key: created.key })
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-limit')).toBe('100')

    expect(cli('list')).toContain(created.id)
    expect(cli('revoke', created.id)).toContain('revoked')
    const listed = (await keyAdmin().list()).find((k) => k.spec.keyId === created.id)
    expect(listed?.spec.revokedAt).toBeTruthy()
  })

  it('refuses an expiry other than 30, 90 or 365 days', () => {
    expect(() => cli('create', '--name', 'x', '--expires-in-days', '7')).toThrow(/30, 90 or 365/)
  })
})
