import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import { chownSync, closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { api } from '../integration/helpers/api.js'
import { BIN_DIR, REPO_ROOT } from '../platform/platform.js'
import { firstKeyCommand } from '../support/chart-notes.js'
import { makePdf } from '../support/pdfs.js'
import { CHART } from './chart-values.js'
import { until } from '../platform/wait-for.js'
import { execShellWords, helm, helmAsync, kubectl, kubectlAsync, putFile } from './helpers.js'

/**
 * The chart as a platform team without internet access installs it: the packaged chart pushed to
 * a private registry (distribution's `registry`, basic auth, run here by the test) and installed
 * from `oci://…` with the registry's credentials, with no values about services, so MinIO,
 * PostgreSQL and Redis run inside the release (a trial). Beside the images' tag (imported into
 * the node's store, as the tier's other releases use them), only what this cluster asks of any
 * chart: IPv4-only NetworkPolicy rules (kube-router 1.x), the CRDs left to the cluster's first
 * release, and, since this machine reaches no public address, the tests' file server as an
 * allowed private network (it stands in for the documents on the internet a trial would fetch).
 * The cluster has no volume provisioner: the test makes three PersistentVolumes first, as its
 * administrator would.
 */
const NS = 'dutil-trial'
const RELEASE = 'trial'
const FULLNAME = 'trial-dutil'
const VOLUMES = [
  { name: 'dutil-trial-a', size: '8Gi' },
  { name: 'dutil-trial-b', size: '8Gi' },
  { name: 'dutil-trial-c', size: '1Gi' },
]

describe.skipIf(inject('nodeBlocker'))(
  'a trial install with no service values (internal MinIO, PostgreSQL and Redis)',
  () => {
    let installStarted = 0
    let key = ''
    let forward: { process: ChildProcess; api: string; filesPort: number } | undefined
    let firstJob = ''
    let registry: Registry | undefined

    beforeAll(async () => {
      registry = await startRegistry()
      await pushChart(registry)
      kubectl(['create', 'namespace', NS])
      for (const v of VOLUMES) {
        const path = join(inject('platformDir'), 'trial-volumes', v.name)
        mkdirSync(path, { recursive: true })
        // A hostPath volume is not changed to the pod's fsGroup: the directory is made theirs here.
        chownSync(path, 10001, 10001)
        kubectl(
          ['apply', '-f', '-'],
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'PersistentVolume',
            metadata: { name: v.name },
            spec: {
              capacity: { storage: v.size },
              accessModes: ['ReadWriteOnce'],
              persistentVolumeReclaimPolicy: 'Retain',
              hostPath: { path, type: 'Directory' },
            },
          }),
        )
      }
    })

    afterAll(async () => {
      forward?.process.kill()
      registry?.process.kill()
      // The README's removal: jobs first, while the operator can still lift their finalizers.
      await kubectlAsync(['-n', NS, 'delete', 'utilityjobs', '--all', '--wait=true', '--timeout=120s'])
      await helmAsync('uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '120s')
      await kubectlAsync(['delete', 'namespace', NS, '--wait=true', '--timeout=120s'])
      await kubectlAsync(['delete', 'pv', ...VOLUMES.map((v) => v.name), '--wait=false'])
    })

    it('installs with helm: every pod ready, the NOTES say it is a trial', async () => {
      installStarted = Date.now()
      const out = await helmAsync(
        'install',
        RELEASE,
        ...fromRegistry(registry!),
        '--set',
        `image.tag=${inject('imageTag')}`,
        // The cluster's first release owns the CRDs (one owner per cluster).
        '--set',
        'crds.install=false',
        '--set-json',
        'networkPolicy.ipFamilies=["IPv4"]',
        '--set-json',
        `allowedPrivateNetworks=${JSON.stringify(allowedFileServer())}`,
        '--wait',
        '--timeout',
        '300s',
      )
      process.stdout.write(
        `[trial] helm install → every pod ready: ${((Date.now() - installStarted) / 1000).toFixed(1)} s\n`,
      )
      // When each pod became ready, from the install's start (what the time to a first job is made of).
      const readiness = kubectl([
        '-n',
        NS,
        'get',
        'pods',
        '-o',
        'jsonpath={range .items[*]}{.metadata.labels.app\\.kubernetes\\.io/component} {.status.conditions[?(@.type=="Ready")].lastTransitionTime}{"\\n"}{end}',
      ])
      process.stdout.write(
        `[trial] ready after: ${readiness
          .trim()
          .split('\n')
          .map((l) => l.split(' '))
          .map(([c, at]) => `${c} ${((Date.parse(at) - installStarted) / 1000).toFixed(0)} s`)
          .join(', ')}\n`,
      )
      expect(out).toContain('THIS IS A TRIAL INSTALL: MinIO, PostgreSQL, Redis run inside the release')
      const claims = kubectl(['-n', NS, 'get', 'pvc', '-o', 'jsonpath={range .items[*]}{.status.phase}{"\\n"}{end}'])
      expect(claims.trim().split('\n')).toEqual(['Bound', 'Bound', 'Bound'])
    })

    it('makes the first key with the NOTES command and runs a split through the port-forward the NOTES print; the files download', async () => {
      const notes = helm('get', 'notes', RELEASE, '--namespace', NS)
      const out = kubectl(JSON.parse(execShellWords(firstKeyCommand(notes).replace(/^kubectl /, ''))))
      key = /key:\s+(du_live_[0-9a-f]{48})/.exec(out)?.[1] ?? ''
      expect(key, out).not.toBe('')
      // The printed port-forward, with free local ports instead of 8080 and 8082 (this host may use them).
      expect(notes).toContain(`port-forward svc/${FULLNAME}-gateway 8080:80 8082:8082`)
      forward = await portForward([':80', ':8082'])

      const url = await putFile('trial.pdf', await makePdf(2))
      const res = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url } }, baseUrl: forward.api })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      process.stdout.write(
        `[trial] helm install → first split-pdf succeeded: ${((Date.now() - installStarted) / 1000).toFixed(1)} s\n`,
      )
      expect(res.body).toMatchObject({ status: 'succeeded', result: { pageCount: 2 } })
      firstJob = res.body.id
      for (const f of res.body.result.files as Array<{ url: string }>) {
        // Links point at 127.0.0.1:8082 (NOTES); this test forwarded another local port to it.
        expect(new URL(f.url).host).toBe('127.0.0.1:8082')
        const d = await getVia(forward.filesPort, f.url)
        expect(d.status).toBe(200)
        expect(d.body.subarray(0, 5).toString()).toBe('%PDF-')
      }
    })

    it('runs an async split (202, then a long-poll) and renders HTML to PDF in the html-pdf runner', async () => {
      const base = forward!.api
      const pdf = await putFile('trial-async.pdf', await makePdf(3))
      const accepted = await api('POST', '/v1/utilities/split-pdf/jobs', {
        key,
        body: { input: { url: pdf } },
        baseUrl: base,
      })
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202)
      const done = await api('GET', `/v1/jobs/${accepted.body.id}?wait=60`, { key, baseUrl: base })
      expect(done.body).toMatchObject({ status: 'succeeded', result: { pageCount: 3 } })
      const page = await putFile('trial.html', '<!doctype html><title>t</title><h1>A trial</h1>')
      const rendered = await api('POST', '/v1/utilities/html-pdf', {
        key,
        body: { input: { url: page } },
        baseUrl: base,
      })
      expect(rendered.status, JSON.stringify(rendered.body)).toBe(200)
      const d = await getVia(forward!.filesPort, rendered.body.result.files[0].url)
      expect(d.body.subarray(0, 5).toString()).toBe('%PDF-')
    })

    it('serves the console through the port-forward; the first admin link the NOTES command makes opens there', async () => {
      // Nothing here blocks the event loop: a pooled connection through the port-forward must be
      // let go on time, not reused after the gateway closed it.
      const notes = await helmAsync('get', 'notes', RELEASE, '--namespace', NS)
      const command = /dutil admin create .*/.exec(notes)?.[0] ?? ''
      expect(command).toContain(`--namespace ${NS} --url http://127.0.0.1:8080`)
      // The command as printed, run by the CLI of this checkout with the cluster admin's kubeconfig.
      const args = (JSON.parse(execShellWords(command.replace(/^dutil /, ''))) as string[]).map((a) =>
        a === 'you@example.com' ? 'trial-admin@example.com' : a,
      )
      const { stdout: out } = await promisify(execFile)(
        process.execPath,
        [join(REPO_ROOT, 'bin', 'dutil.js'), ...args],
        {
          encoding: 'utf8',
          env: { ...process.env, KUBECONFIG: inject('kubeconfigPath') },
        },
      )
      const link = /(http:\/\/127\.0\.0\.1:8080\/console\/invite\/\S+)/.exec(out)?.[1] ?? ''
      expect(link, out).not.toBe('')
      const token = link.slice(link.lastIndexOf('/') + 1)
      const page = await fetch(`${forward!.api}/console/`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('<title>dutil console</title>')
      const invite = await fetch(`${forward!.api}/console/api/invites/${token}`)
      expect(invite.status).toBe(200)
      expect(await invite.json()).toMatchObject({ email: 'trial-admin@example.com', role: 'admin' })
    })

    it('passes `helm test` (readiness, OpenAPI, one tiny job through a runner)', async () => {
      const out = await helmAsync('test', RELEASE, '--namespace', NS, '--timeout', '120s')
      expect(out).toMatch(/Succeeded/)
    })

    it('keeps the generated credentials on upgrade and the job record when PostgreSQL restarts on its volume', async () => {
      const secret = () => kubectl(['-n', NS, 'get', 'secret', `${FULLNAME}-internal`, '-o', 'jsonpath={.data}'])
      const before = secret()
      await helmAsync(
        'upgrade',
        RELEASE,
        ...fromRegistry(registry!),
        '--reuse-values',
        '--set',
        'operator.replicas=1',
        '--wait',
        '--timeout',
        '300s',
      )
      expect(secret()).toBe(before)
      await kubectlAsync(['-n', NS, 'delete', 'pod', `${FULLNAME}-postgresql-0`, '--wait=true'])
      await kubectlAsync(['-n', NS, 'wait', '--for=condition=Ready', `pod/${FULLNAME}-postgresql-0`, '--timeout=120s'])
      forward?.process.kill()
      forward = await portForward([':80'])
      const base = forward.api
      await expect
        .poll(async () => (await api('GET', `/v1/jobs/${firstJob}`, { key, baseUrl: base })).body?.status, {
          timeout: 60_000,
          interval: 1000,
        })
        .toBe('succeeded')
    })
  },
)

/** The tests' file server, by its Service's ClusterIP and its pod's address (both as the runner sees them). */
function allowedFileServer(): string[] {
  const ip = (args: string[], path: string) => kubectl([...args, '-o', `jsonpath={${path}}`])
  return [
    `${ip(['-n', 'dutil-test', 'get', 'service', 'test-services'], '.spec.clusterIP')}/32`,
    `${ip(['-n', 'dutil-test', 'get', 'pod', 'test-services'], '.status.podIP')}/32`,
  ]
}

/** `kubectl port-forward svc/<gateway> <ports>`: the local ports it picked, in order. */
async function portForward(ports: string[]): Promise<{ process: ChildProcess; api: string; filesPort: number }> {
  const child = spawn(
    join(BIN_DIR, 'kubectl'),
    ['--kubeconfig', inject('kubeconfigPath'), '-n', NS, 'port-forward', `svc/${FULLNAME}-gateway`, ...ports],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const local: number[] = []
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`port-forward did not start: ${output}`)), 30_000)
    const read = (d: Buffer) => {
      output += d.toString()
      for (const m of d.toString().matchAll(/Forwarding from 127\.0\.0\.1:(\d+)/g)) local.push(Number(m[1]))
      if (local.length >= ports.length) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout.on('data', read)
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    child.once('exit', (code) => reject(new Error(`port-forward exited ${code}: ${output}`)))
  })
  return { process: child, api: `http://127.0.0.1:${local[0]}`, filesPort: local[1] ?? 0 }
}

/** GET `url` through a local port, with the Host header its signature was made for. */
function getVia(port: number, url: string): Promise<{ status: number; body: Buffer }> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: u.pathname + u.search, headers: { host: u.host } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
    req.end()
  })
}

const REGISTRY_USER = 'platform-team'
const chartYaml = readFileSync(join(CHART, 'Chart.yaml'), 'utf8')
const CHART_VERSION = /^version: (\S+)$/m.exec(chartYaml)![1]

/** The chart in the registry, as `helm install` and `helm upgrade` name it, into the trial's namespace. */
function fromRegistry(r: Registry): string[] {
  return [
    `oci://${r.address}/charts/dutil`,
    '--version',
    CHART_VERSION,
    '--plain-http',
    '--registry-config',
    r.helmConfig,
    '--namespace',
    NS,
  ]
}

interface Registry {
  process: ChildProcess
  address: string
  /** Helm's registry credentials (what `helm registry login` writes), in a file of the test's. */
  helmConfig: string
}

/** distribution's registry on the node's address, basic auth (htpasswd, bcrypt), storage on disk. */
async function startRegistry(): Promise<Registry> {
  const { address } = inject('registry')
  const dir = join(inject('platformDir'), 'registry')
  mkdirSync(join(dir, 'data'), { recursive: true })
  const password = randomBytes(12).toString('hex')
  execFileSync('htpasswd', ['-Bbc', join(dir, 'htpasswd'), REGISTRY_USER, password], { stdio: 'ignore' })
  writeFileSync(
    join(dir, 'config.yml'),
    [
      'version: 0.1',
      'log: { level: warn }',
      `storage: { filesystem: { rootdirectory: ${join(dir, 'data')} } }`,
      `http: { addr: "${address}" }`,
      `auth: { htpasswd: { realm: dutil-test, path: ${join(dir, 'htpasswd')} } }`,
      '',
    ].join('\n'),
  )
  const log = join(dir, 'registry.log')
  const logFd = openSync(log, 'w')
  const child = spawn(join(BIN_DIR, 'registry'), ['serve', join(dir, 'config.yml')], {
    stdio: ['ignore', 'ignore', logFd],
    env: { ...process.env, OTEL_TRACES_EXPORTER: 'none' },
  })
  closeSync(logFd) // the registry has its own copy
  // Anonymous requests are refused: Helm needs the credentials.
  await until(
    `the registry answers on ${address} (its log: ${log})`,
    async () => (await fetch(`http://${address}/v2/`).catch(() => undefined))?.status === 401,
    30_000,
    200,
  )
  const helmConfig = join(dir, 'helm-registry.json')
  const auth = Buffer.from(`${REGISTRY_USER}:${password}`).toString('base64')
  writeFileSync(helmConfig, JSON.stringify({ auths: { [address]: { auth } } }), { mode: 0o600 })
  return { process: child, address, helmConfig }
}

/** What docs/install.md has a platform team do with the chart of a release: `helm push` it to their registry. */
async function pushChart(r: Registry): Promise<void> {
  const dir = join(inject('platformDir'), 'registry')
  await helmAsync('package', CHART, '--destination', dir)
  await helmAsync(
    'push',
    join(dir, `dutil-${CHART_VERSION}.tgz`),
    `oci://${r.address}/charts`,
    '--plain-http',
    '--registry-config',
    r.helmConfig,
  )
}
