import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import { chownSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest'
import { objectNameOf } from '../../contract/ids.js'
import { api } from '../integration/helpers/api.js'
import { BIN_DIR, REPO_ROOT } from '../platform/platform.js'
import { firstKeyCommand } from '../support/chart-notes.js'
import { makePdf } from '../support/pdfs.js'
import { CHART, imageRef } from './chart-values.js'
import { nodeCtr, serveRegistry } from '../real-node/real-node.js'
import { pushWithLabels } from './registry-push.js'
import { execShellWords, helm, helmAsync, kubectl, kubectlAsync, putFile } from './helpers.js'

/**
 * The chart as a platform team without internet access installs it: the images and the packaged
 * chart pushed to a private registry (distribution's `registry`, basic auth, run here by the
 * test) as docs/install.md says, and the chart installed from `oci://…` with the registry, a pull
 * secret and no values about services, so MinIO, PostgreSQL and Redis run inside the release (a
 * trial). Beside those, only what this cluster asks of any chart: IPv4-only NetworkPolicy rules
 * (kube-router 1.x), the CRDs left to the cluster's first release, and, since this machine
 * reaches no public address, the tests' services as an allowed private network (they stand in
 * for the documents and the callback receiver on the internet) with the private CA that signs
 * the receiver's certificate. The cluster has no volume provisioner: the test makes three
 * PersistentVolumes first, as its administrator would.
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
    let pushed: PushedImage[] = []
    let signingSecret = ''

    beforeAll(async () => {
      forgetPulledImages([])
      registry = await startRegistry()
      pushed = await pushImages(registry)
      await pushChart(registry)
      kubectl(['create', 'namespace', NS])
      kubectl([
        '-n',
        NS,
        'create',
        'secret',
        'docker-registry',
        'dutil-pull',
        `--docker-server=${registry.address}`,
        `--docker-username=${REGISTRY_USER}`,
        `--docker-password=${registry.password}`,
      ])
      // The private CA the callback receiver's certificate chains to, as a team trusts its own.
      kubectl(['-n', NS, 'create', 'configmap', 'trial-ca', `--from-file=ca.crt=${inject('testCaFile')}`])
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

    // A failed step prints what the release's programs logged at warn or above (a 500's cause is
    // logged with its request id, never answered), so the failure can be read from the run's log.
    beforeEach(({ onTestFailed }) => onTestFailed(printReleaseWarnings))
    const printReleaseWarnings = () => {
      for (const program of ['gateway', 'operator']) {
        const selector = `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=${program}`
        let lines: string[]
        try {
          lines = kubectl(['-n', NS, 'logs', '-l', selector, '--all-containers', '--prefix', '--tail=400'])
            .split('\n')
            .filter((l) => /"level":[456]\d/.test(l))
        } catch (err) {
          lines = [`(no logs: ${String(err).split('\n')[0]})`]
        }
        process.stdout.write(`[trial] ${program} warnings and errors:\n${lines.slice(-40).join('\n')}\n`)
      }
    }

    afterAll(async () => {
      forward?.process.kill()
      registry?.process.kill()
      // The README's removal: jobs first, while the operator can still lift their finalizers.
      await kubectlAsync(['-n', NS, 'delete', 'utilityjobs', '--all', '--wait=true', '--timeout=120s'])
      await helmAsync('uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '120s').catch((err: unknown) => {
        // Nothing to remove when the install itself failed (its error is the one to read).
        if (!/release: not found/.test(String(err))) throw err
      })
      await kubectlAsync(['delete', 'namespace', NS, '--wait=true', '--timeout=120s'])
      await kubectlAsync(['delete', 'pv', ...VOLUMES.map((v) => v.name), '--wait=false'])
      forgetPulledImages(pushed)
      // The registry's blobs are a copy of every image (some GB): they go with the run.
      rmSync(join(inject('platformDir'), 'registry'), { recursive: true, force: true })
    })

    it('installs with helm: every pod ready, the NOTES say it is a trial', async () => {
      installStarted = Date.now()
      const out = await helmAsync(
        'install',
        RELEASE,
        ...fromRegistry(registry!),
        '--set',
        `image.registry=${registry!.address}/dutil`,
        '--set',
        'imagePullSecrets[0].name=dutil-pull',
        '--set',
        'trustedCaBundle.configMap=trial-ca',
        // The cluster's first release owns the CRDs (one owner per cluster).
        '--set',
        'crds.install=false',
        '--set-json',
        'networkPolicy.ipFamilies=["IPv4"]',
        '--set-json',
        `allowedPrivateNetworks=${JSON.stringify(allowedFileServer())}`,
        // html-pdf in pool mode: its pool pods reach the internal MinIO as job mode's pods do.
        '--set',
        'runners.html-pdf.mode=pool',
        '--set',
        'runners.html-pdf.pool.size=1',
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
        'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].lastTransitionTime}{"\\n"}{end}',
      ])
      process.stdout.write(
        `[trial] ready after: ${readiness
          .trim()
          .split('\n')
          .map((l) => l.split(' '))
          .map(
            ([pod, at]) =>
              `${pod.replace(`${FULLNAME}-`, '')} ${at ? `${((Date.parse(at) - installStarted) / 1000).toFixed(0)} s` : 'never ready (done)'}`,
          )
          .join(', ')}\n`,
      )
      expect(out).toContain('THIS IS A TRIAL INSTALL: MinIO, PostgreSQL, Redis run inside the release')
      // Every program's image came from the registry, with the pull secret.
      const programs = ['gateway', 'operator', 'minio', 'postgresql', 'redis']
      expect(pulledImages()).toEqual(
        expect.arrayContaining(programs.map((p) => `${registry!.address}/dutil/dutil-${p}:${APP_VERSION}`)),
      )
      const claims = kubectl(['-n', NS, 'get', 'pvc', '-o', 'jsonpath={range .items[*]}{.status.phase}{"\\n"}{end}'])
      expect(claims.trim().split('\n')).toEqual(['Bound', 'Bound', 'Bound'])
    })

    it('makes the first key with the NOTES command and runs a split through the port-forward the NOTES print; the files download', async () => {
      const notes = helm('get', 'notes', RELEASE, '--namespace', NS)
      const out = kubectl(JSON.parse(execShellWords(firstKeyCommand(notes).replace(/^kubectl /, ''))))
      key = /key:\s+(du_live_[0-9a-f]{48})/.exec(out)?.[1] ?? ''
      expect(key, out).not.toBe('')
      signingSecret = /signing secret:\s+(whsec_\S+)/.exec(out)?.[1] ?? ''
      expect(signingSecret, out).not.toBe('')
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
      // The runner's image too, pulled by the kubelet with the pull secret the runner pod template carries.
      expect(pulledImages()).toContain(`${registry!.address}/dutil/dutil-runner-split-pdf:${APP_VERSION}`)
      for (const f of res.body.result.files as Array<{ url: string }>) {
        // Links point at 127.0.0.1:8082 (NOTES); this test forwarded another local port to it.
        expect(new URL(f.url).host).toBe('127.0.0.1:8082')
        const d = await getVia(forward.filesPort, f.url)
        expect(d.status).toBe(200)
        expect(d.body.subarray(0, 5).toString()).toBe('%PDF-')
      }
    })

    it('runs an async split (202, then a long-poll) with a signed callback, and renders HTML to PDF in a pooled html-pdf runner', async () => {
      const base = forward!.api
      const pdf = await putFile('trial-async.pdf', await makePdf(3))
      const callbackUrl = `${inject('callbackBase')}/trial`
      const accepted = await api('POST', '/v1/utilities/split-pdf/jobs', {
        key,
        body: { input: { url: pdf }, callbackUrl },
        baseUrl: base,
      })
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202)
      const done = await api('GET', `/v1/jobs/${accepted.body.id}?wait=60`, { key, baseUrl: base })
      expect(done.body).toMatchObject({ status: 'succeeded', result: { pageCount: 3 } })
      let got: ReceivedCallback[] = []
      await expect
        .poll(
          async () => {
            got = (await receivedCallbacks()).filter((r) => r.path === '/callbacks/trial')
            return got.length
          },
          { timeout: 60_000, interval: 500 },
        )
        .toBe(1)
      const event = new Webhook(signingSecret).verify(got[0].body, got[0].headers) as { type: string; data: unknown }
      expect(event).toMatchObject({ type: 'job.succeeded', data: { id: accepted.body.id, status: 'succeeded' } })
      const page = await putFile('trial.html', '<!doctype html><title>t</title><h1>A trial</h1>')
      const rendered = await api('POST', '/v1/utilities/html-pdf', {
        key,
        body: { input: { url: page } },
        baseUrl: base,
      })
      expect(rendered.status, JSON.stringify(rendered.body)).toBe(200)
      // It ran in a pool pod of the release.
      const pod = kubectl([
        '-n',
        NS,
        'get',
        'utilityjob',
        objectNameOf(rendered.body.id),
        '-o',
        'jsonpath={.status.runnerPod}',
      ])
      expect(pod).toMatch(/^dutil-pool-html-pdf-[a-z0-9]{8}$/)
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
      const link = /(http:\/\/127\.0\.0\.1:8080\/console\/invite#\S+)/.exec(out)?.[1] ?? ''
      expect(link, out).not.toBe('')
      const token = new URL(link).hash.slice(1)
      const page = await fetch(`${forward!.api}/console/`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('<title>dutil console</title>')
      const invite = await fetch(`${forward!.api}/console/api/invites/lookup`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: forward!.api },
        body: JSON.stringify({ token }),
      })
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
const APP_VERSION = /^appVersion: "?([^"\s]+)"?$/m.exec(chartYaml)![1]

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
  password: string
  /** Helm's registry credentials (what `helm registry login` writes), in a file of the test's. */
  helmConfig: string
}

/** distribution's registry on the node's address, basic auth (htpasswd, bcrypt), storage on disk. */
async function startRegistry(): Promise<Registry> {
  const { address } = inject('registry')
  const dir = join(inject('platformDir'), 'registry')
  const password = randomBytes(12).toString('hex')
  mkdirSync(dir, { recursive: true })
  execFileSync('htpasswd', ['-Bbc', join(dir, 'htpasswd'), REGISTRY_USER, password], { stdio: 'ignore' })
  // Anonymous requests are refused: Helm and the kubelet need the credentials.
  const child = await serveRegistry({
    dir,
    address,
    auth: `auth: { htpasswd: { realm: dutil-test, path: ${join(dir, 'htpasswd')} } }`,
    answers: 401,
  })
  // containerd reaches it over plain http (read at each pull).
  const { hostsDir } = inject('registry')
  mkdirSync(join(hostsDir, address), { recursive: true })
  writeFileSync(
    join(hostsDir, address, 'hosts.toml'),
    `server = "http://${address}"\n\n[host."http://${address}"]\n  capabilities = ["pull", "resolve"]\n`,
  )
  const helmConfig = join(dir, 'helm-registry.json')
  const auth = Buffer.from(`${REGISTRY_USER}:${password}`).toString('base64')
  writeFileSync(helmConfig, JSON.stringify({ auths: { [address]: { auth } } }), { mode: 0o600 })
  return { process: child, address, password, helmConfig }
}

interface PushedImage {
  /** As the chart names it: `<registry>/dutil/dutil-<program>:<appVersion>`. */
  ref: string
  /** Its image id (the config's digest), which the node's store keys it by once pulled. */
  id: string
}

/**
 * What docs/install.md has a platform team do with a release's images: each pushed to their
 * registry under the chart's appVersion. The node's store already holds the images under the
 * tier's tag (imported for the other releases); each is pushed from there through the registry's
 * API (what skopeo, crane or oras do) with one label more in its config (this run's), so its
 * image id is its own: the kubelet's pull makes a new image in containerd rather than a second
 * name for one the other releases run. The layers are the same blobs, sent once.
 */
async function pushImages(r: Registry): Promise<PushedImage[]> {
  const tag = inject('imageTag')
  const listed = nodeCtr(inject('containerdSocket'))('images', 'ls')
    .split('\n')
    .map((line) => line.split(/\s+/))
    .filter(([ref]) => ref === imageRef(/\/dutil-([a-z0-9-]+):/.exec(ref)?.[1] ?? '-', tag))
    // The images a release runs (make release leaves out the local platform's browser image).
    .filter(([ref]) => !ref.includes('-browser:'))
  expect(listed.length).toBeGreaterThanOrEqual(10)
  const label = { 'dutil.test/registry-copy': String(Date.now()) }
  const pushed: PushedImage[] = []
  for (const [source, mediaType, digest] of listed) {
    const name = /\/(dutil-[a-z0-9-]+):/.exec(source)![1]
    const id = await pushWithLabels({
      contentDir: inject('registry').contentDir,
      target: { mediaType, digest },
      registry: { address: r.address, user: REGISTRY_USER, password: r.password },
      repository: `dutil/${name}`,
      tag: APP_VERSION,
      labels: label,
    })
    pushed.push({ ref: `${r.address}/dutil/${name}:${APP_VERSION}`, id })
  }
  return pushed
}

/** The images the kubelet pulled into the trial's namespace (its `Pulled` events). */
function pulledImages(): string[] {
  const messages = kubectl(['-n', NS, 'get', 'events', '--field-selector', 'reason=Pulled', '-o', 'json'])
  return (JSON.parse(messages).items as Array<{ message: string }>)
    .map((e) => /^Successfully pulled image "([^"]+)"/.exec(e.message)?.[1])
    .filter((ref): ref is string => ref !== undefined)
}

/**
 * Removes what a trial pulled from the node's store, which outlives the run: every name from the
 * registry (an interrupted run's too, which would otherwise pass for present) and the ids pushed.
 */
function forgetPulledImages(pushed: PushedImage[]): void {
  const { address } = inject('registry')
  const ctr = nodeCtr(inject('containerdSocket'))
  const ids = new Set(pushed.map((p) => p.id))
  const names = ctr('images', 'ls', '-q')
    .split('\n')
    .filter((n) => n.startsWith(`${address}/`) || ids.has(n))
  if (names.length > 0) ctr('images', 'rm', ...names)
}

interface ReceivedCallback {
  path: string
  headers: Record<string, string>
  body: string
}

/** What the tests' https receiver has been sent so far. */
async function receivedCallbacks(): Promise<ReceivedCallback[]> {
  return (await (await fetch(inject('filesUrl').replace(/\/files$/, '/received'))).json()) as ReceivedCallback[]
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
