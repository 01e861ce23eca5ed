import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node'
import { PDFDocument } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { parse, stringify } from 'yaml'
import { catalog } from '../../runners/catalog.js'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { newId, objectNameOf } from '../../contract/ids.js'
import {
  EXIT,
  inputObjectKey,
  MAX_RESULT_MANIFEST_BYTES,
  resultObjectKey,
  type RunnerResult,
} from '../../contract/runner-protocol.js'
import { readJsonObject, storageClient, writeJsonObject } from '../../platform/storage-client.js'
import { isoMs } from '../../contract/time.js'
import { desiredJob } from '../../operator/desired-job.js'
import { stsCredentialIssuer } from '../../operator/runner-credentials.js'
import { BIN_DIR, REPO_ROOT } from '../platform/platform.js'
import { until } from '../platform/wait-for.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { API_GROUP, API_KEY, API_VERSION } from '../../contract/api-group.js'
import { CONSOLE_INVITE } from '../../contract/console-resources.js'
import { metricValue, scrape } from './helpers/processes.js'
import { createKey, kubeConfig } from './helpers/keys.js'

/**
 * The images `make images` builds (images/build-images.sh; make test builds them first, from the
 * layer cache when nothing changed), run by Debian's Docker engine under the restrictions the
 * chart sets: read-only root file system, uid 10001, no capabilities, no privilege escalation.
 */
const docker = process.env.DOCKER ?? 'docker'
/** How long the images phase may take (a cold build from an empty layer cache takes ~3 minutes). */
const IMAGES_WAIT_MS = 20 * 60_000
const registry = process.env.DUTIL_IMAGE_REGISTRY ?? 'ghcr.io/dutil'
const tag = process.env.DUTIL_IMAGE_TAG ?? JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version
const image = (name: string) => `${registry}/${name}:${tag}`
const RESTRICTED = [
  '--read-only',
  '--user',
  '10001:10001',
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
  '--network',
  'host',
]

function dockerRun(args: string[], input?: string) {
  return spawnSync(docker, ['run', '--rm', ...args], { encoding: 'utf8', input, timeout: 120_000 })
}
const inspect = (ref: string) => JSON.parse(execFileSync(docker, ['image', 'inspect', ref], { encoding: 'utf8' }))[0]
const imageExists = (ref: string) => spawnSync(docker, ['image', 'inspect', ref]).status === 0

beforeAll(async () => {
  if (!process.env.DOCKER_HOST)
    throw new Error('no Docker engine: run the tests with `make test` (images/docker-engine.sh provides one)')
  // make test builds the images beside the integration tests and writes the outcome here.
  const done = process.env.DUTIL_IMAGES_DONE_FILE
  if (done) {
    await until(`the images phase (${done})`, async () => existsSync(done), IMAGES_WAIT_MS, 1_000)
    expect(readFileSync(done, 'utf8').trim(), 'the images phase failed: see its log').toBe('ok')
  }
}, IMAGES_WAIT_MS + 10_000)

describe('images', () => {
  const programs = ['dutil-gateway', 'dutil-operator', 'dutil-runner-split-pdf']

  it('are built for the gateway, the operator and every runner whose program exists, as non-root images without a shell', () => {
    for (const name of programs) {
      expect(imageExists(image(name)), `${image(name)} (make images)`).toBe(true)
      const config = inspect(image(name)).Config
      expect(config.User).toBe('10001:10001')
      const shell = dockerRun(['--entrypoint', 'sh', image(name), '-c', 'true'])
      expect(shell.status, `${name} has a shell`).not.toBe(0)
      expect(shell.stderr).toMatch(/executable file not found|no such file/)
    }
    expect(inspect(image('dutil-gateway')).Config.Healthcheck.Test.join(' ')).toContain('/healthz')
    expect(inspect(image('dutil-operator')).Config.Healthcheck.Test.join(' ')).toContain('/healthz')
  })

  describe('the split-pdf runner image against the local MinIO', () => {
    const storage = () => inject('storage')
    let dir: string
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'dutil-image-test-'))
    })
    afterAll(() => rmSync(dir, { recursive: true, force: true }))

    /** Runs the image as the operator's Job would: its command, its environment, its security context. */
    async function runJob(inputUrl: string) {
      const now = Date.now()
      const jobId = newId('job', now)
      const s3 = storageClient(storage())
      await writeJsonObject(s3, storage().bucket, inputObjectKey(jobId), { url: inputUrl })
      const uj = {
        apiVersion: 'dutil.io/v1alpha1',
        kind: 'UtilityJob',
        metadata: { name: objectNameOf(jobId), namespace: 'dutil', uid: 'u' },
        spec: {
          jobId,
          utility: 'split-pdf',
          mode: 'async',
          apiKeyId: 'key_x',
          apiKeyName: 'k',
          createdAt: isoMs(now),
          inputKey: inputObjectKey(jobId),
          metadata: null,
          ...(inputUrl.startsWith('s3://') ? { storageInputKeys: [inputUrl.replace(/^s3:\/\/[^/]+\//, '')] } : {}),
        },
      } as UtilityJobResource
      const settings = {
        imageRegistry: registry,
        imageTag: tag,
        storage: { endpoint: storage().endpoint, region: storage().region, bucket: storage().bucket },
        allowLoopbackUrls: false,
        jobTtlSeconds: 60,
      }
      // The job's own credentials, issued as the operator issues them (STS with the job's policy).
      const issue = stsCredentialIssuer(
        {
          endpoint: storage().endpoint,
          region: storage().region,
          accessKey: storage().accessKey,
          secretKey: storage().secretKey,
        },
        storage().bucket,
      )
      const container = desiredJob(uj, catalog.get('split-pdf')!, settings, await issue(uj, catalog.get('split-pdf')!))
        .spec!.template.spec!.containers[0]
      const env = container.env!.flatMap((e) => ['-e', `${e.name}=${e.value}`])
      const termination = join(dir, `${jobId}.termination-log`)
      writeFileSync(termination, '')
      chmodSync(termination, 0o666)
      const [command, ...args] = container.command!
      const res = dockerRun([
        ...RESTRICTED,
        '-v',
        `${termination}:/dev/termination-log`,
        ...env,
        '--entrypoint',
        command,
        container.image!,
        ...args,
      ])
      return { jobId, res, termination: readFileSync(termination, 'utf8') }
    }

    /** An input where s3:// inputs live: the output of an earlier job (a runner's grant reads nothing else). */
    const sourceKey = (name: string) => `unzip-files/${isoMs(Date.now()).slice(0, 10)}/${newId('job')}/${name}`

    it('splits a PDF read from storage and stores one page per file, with the result manifest the operator reads', async () => {
      const s3 = storageClient(storage())
      const input = sourceKey('image.pdf')
      await s3.putObject(storage().bucket, input, await makePdf(3))
      const { jobId, res } = await runJob(`s3://${storage().bucket}/${input}`)
      expect(res.status, res.stdout + res.stderr).toBe(0)
      const result = await readJsonObject<RunnerResult>(
        s3,
        storage().bucket,
        resultObjectKey(jobId),
        MAX_RESULT_MANIFEST_BYTES,
      )
      expect(result.extras.pageCount).toBe(3)
      expect(result.files).toHaveLength(3)
      for (const f of result.files) {
        expect(f.key).toBe(`split-pdf/${isoMs(Date.now()).slice(0, 10)}/${jobId}/${f.name}`)
        const bytes = Buffer.concat(await (await s3.getObject(storage().bucket, f.key)).toArray())
        expect((await PDFDocument.load(bytes)).getPageCount()).toBe(1)
      }
      expect(res.stdout).toContain('runner succeeded')
    })

    it('rejects a file that is not a PDF with the classified exit code and a termination message', async () => {
      const s3 = storageClient(storage())
      const input = sourceKey('not.pdf')
      await s3.putObject(storage().bucket, input, Buffer.from('<html>no</html>'))
      const { res, termination } = await runJob(`s3://${storage().bucket}/${input}`)
      expect(res.status).toBe(EXIT.rejected)
      expect(JSON.parse(termination)).toMatchObject({ code: 'upstream_rejected' })
    })
  })

  it('runs the gateway and the operator images against the platform: probes answer, the HEALTHCHECK passes, the operator stands by', async () => {
    const dir = readableKubeconfig()
    const programEnv = inject('programEnv')
    const gatewayPort = Number(programEnv.DUTIL_PORT) + 7
    const operatorPort = Number(programEnv.DUTIL_PORT) + 8
    const env = (extra: Record<string, string>) =>
      Object.entries({ ...programEnv, KUBECONFIG: join(dir, 'kubeconfig'), NODE_EXTRA_CA_CERTS: '', ...extra }).flatMap(
        ([k, v]) => ['-e', `${k}=${v}`],
      )
    const names = [`dutil-image-gateway-${process.pid}`, `dutil-image-operator-${process.pid}`]
    try {
      const start = (name: string, img: string, extra: Record<string, string>) =>
        execFileSync(
          docker,
          ['run', '-d', '--name', name, ...RESTRICTED, '-v', `${dir}:${dir}:ro`, ...env(extra), img],
          { encoding: 'utf8' },
        )
      // Its own ports: the platform's gateway holds the programEnv ones (its files host included).
      start(names[0], image('dutil-gateway'), {
        DUTIL_HOST: '127.0.0.1',
        DUTIL_PORT: String(gatewayPort),
        DUTIL_FILES_PORT: String(gatewayPort + 2),
      })
      start(names[1], image('dutil-operator'), {
        DUTIL_OPERATOR_HOST: '127.0.0.1',
        DUTIL_OPERATOR_PORT: String(operatorPort),
        DUTIL_POD_NAME: 'operator-image',
      })
      await until(
        'gateway image ready',
        async () => (await fetch(`http://127.0.0.1:${gatewayPort}/readyz`).catch(() => null))?.status === 200,
        60_000,
        250,
      )
      await until(
        'operator image ready',
        async () => (await fetch(`http://127.0.0.1:${operatorPort}/readyz`).catch(() => null))?.status === 200,
        60_000,
        250,
      )
      const openapi = (await (await fetch(`http://127.0.0.1:${gatewayPort}/v1/openapi.json`)).json()) as {
        openapi: string
      }
      expect(openapi.openapi).toMatch(/^3\.1/)
      expect(metricValue(await scrape(operatorPort), 'dutil_operator_leader')).toBe(0) // the platform's operator leads
      const health = (name: string) =>
        execFileSync(docker, ['inspect', '--format', '{{.State.Health.Status}}', name], { encoding: 'utf8' }).trim()
      await until(
        'both healthy',
        async () => health(names[0]) === 'healthy' && health(names[1]) === 'healthy',
        60_000,
        500,
      )
    } finally {
      spawnSync(docker, ['rm', '-f', ...names])
      rmSync(dir, { recursive: true, force: true })
    }
  })

  describe('the key commands the chart NOTES print, inside the image they name', () => {
    const ns = 'dutil-image-cli'
    let dir: string
    let notes: string
    const core = () => kubeConfig().makeApiClient(CoreV1Api)
    beforeAll(async () => {
      dir = readableKubeconfig()
      await core()
        .createNamespace({ body: { metadata: { name: ns } } })
        .catch(() => undefined)
      // What `helm install` prints, with the images this run built.
      const out = execFileSync(
        join(BIN_DIR, 'helm'),
        [
          'install',
          'dutil',
          join(REPO_ROOT, 'charts', 'dutil'),
          '--namespace',
          ns,
          '--dry-run=client',
          '-f',
          join(REPO_ROOT, 'charts', 'dutil', 'ci', 'lint-values.yaml'),
          '--set',
          `image.registry=${registry}`,
          '--set',
          `image.tag=${tag}`,
        ],
        { encoding: 'utf8' },
      )
      notes = out.slice(out.indexOf('NOTES:'))
    })
    afterAll(async () => {
      rmSync(dir, { recursive: true, force: true })
      await core()
        .deleteNamespace({ name: ns })
        .catch(() => undefined)
    })

    /** The `kubectl run` of the NOTES as a `docker run` of the same image, command, args and env. */
    function notesCommand() {
      const lines = notes.split('\n')
      const first = lines.findIndex((l) => /kubectl -n \S+ run dutil-keys/.test(l))
      expect(first, notes).toBeGreaterThan(0)
      let last = first
      while (lines[last].trimEnd().endsWith('\\')) last++
      const text = lines
        .slice(first, last + 1)
        .map((l) => l.trim().replace(/\\$/, ''))
        .join(' ')
      const imageRef = /--image=(\S+)/.exec(text)![1]
      const overrides = JSON.parse(/--overrides='([^']+)'/.exec(text)![1])
      const args = text
        .slice(text.indexOf(' -- ') + 4)
        .trim()
        .split(/\s+/)
      const container = overrides.spec.containers[0] as {
        command: string[]
        env: Array<{ name: string; value: string }>
      }
      return { imageRef, command: container.command, env: container.env, args }
    }

    function runInImage(args: string[]) {
      const { imageRef, command, env } = notesCommand()
      const envArgs = [...env.map((e) => `${e.name}=${e.value}`), `KUBECONFIG=${join(dir, 'kubeconfig')}`].flatMap(
        (e) => ['-e', e],
      )
      const res = dockerRun([
        ...RESTRICTED,
        '-v',
        `${dir}:${dir}:ro`,
        ...envArgs,
        '--entrypoint',
        command[0],
        imageRef,
        ...command.slice(1),
        ...args,
      ])
      return { ...res, output: `${res.stdout}${res.stderr}` }
    }

    it('names the operator image this run built, and the image runs the CLI', () => {
      const { imageRef, command } = notesCommand()
      expect(imageRef).toBe(image('dutil-operator'))
      expect(command).toEqual(['node', '/app/bin/dutil.js'])
      const help = runInImage(['--help'])
      expect(help.status, help.output).toBe(0)
      expect(help.stdout).toContain('keys create --name NAME')
      expect(help.stdout).toContain('admin create --email EMAIL')
    })

    it('creates the first key, then lists, rotates, reveals and revokes it, as the NOTES say', async () => {
      const { args } = notesCommand()
      expect(args.slice(0, 2)).toEqual(['keys', 'create'])
      const created = runInImage(args)
      expect(created.status, created.output).toBe(0)
      const id = /API key (key_\w+) created/.exec(created.stdout)?.[1]
      expect(id, created.output).toBeDefined()
      expect(created.stdout).toMatch(/key:\s+du_live_[0-9a-f]{48}/)
      const others = /Other key commands \(([^)]+)\)/.exec(notes.replace(/\s+/g, ' '))![1].split(/,\s*/)
      expect(others).toEqual(['list', 'revoke', 'rotate-secret', 'reveal-secret'])
      const list = runInImage(['keys', 'list', '--json'])
      expect(list.status, list.output).toBe(0)
      expect(JSON.parse(list.stdout).map((k: { id: string }) => k.id)).toEqual([id])
      const rotated = runInImage(['keys', 'rotate-secret', id!, '--json'])
      expect(rotated.status, rotated.output).toBe(0)
      const revealed = runInImage(['keys', 'reveal-secret', id!, '--json'])
      expect(revealed.status, revealed.output).toBe(0)
      expect(JSON.parse(revealed.stdout).signingSecret).toBe(JSON.parse(rotated.stdout).signingSecret)
      const revoked = runInImage(['keys', 'revoke', id!])
      expect(revoked.status, revoked.output).toBe(0)
      const keys = (await kubeConfig().makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: ns,
        plural: API_KEY.plural,
      })) as {
        items: Array<{ spec: { revokedAt?: string } }>
      }
      expect(keys.items).toHaveLength(1)
      expect(keys.items[0].spec.revokedAt).toBeTruthy()
    })

    it('issues the first console admin link from the same image', async () => {
      const res = runInImage([
        'admin',
        'create',
        '--email',
        'first-admin@example.com',
        '--url',
        'https://dutil.example.com',
        '--json',
      ])
      expect(res.status, res.output).toBe(0)
      expect(JSON.parse(res.stdout)).toMatchObject({
        email: 'first-admin@example.com',
        role: 'admin',
        link: expect.stringMatching(/^https:\/\/dutil\.example\.com\/console\/invite#[\w-]{43}$/),
      })
      const invites = (await kubeConfig().makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: ns,
        plural: CONSOLE_INVITE.plural,
      })) as {
        items: unknown[]
      }
      expect(invites.items).toHaveLength(1)
    })
  })

  describe("the README's CLI commands, inside the image the chart NOTES name", () => {
    let files: FileServer
    let apiKey: string
    beforeAll(async () => {
      files = await new FileServer().start()
      apiKey = (await createKey({ name: 'image-cli' })).key
    })
    afterAll(() => files.stop())

    /** The operator image's CLI (what the NOTES run), on the host's network, against this platform. */
    function cli(
      args: string[],
      env: Record<string, string> = {},
      kubeconfigDir?: string,
    ): Promise<{ status: number | null; stdout: string; stderr: string; output: string }> {
      const envArgs = Object.entries({ DUTIL_URL: inject('gatewayUrl'), DUTIL_API_KEY: apiKey, ...env }).flatMap(
        ([k, v]) => ['-e', `${k}=${v}`],
      )
      const mounts = kubeconfigDir ? ['-v', `${kubeconfigDir}:${kubeconfigDir}:ro`] : []
      const argv = [
        'run',
        '--rm',
        ...RESTRICTED,
        '--tmpfs',
        '/out:rw,uid=10001,gid=10001',
        ...mounts,
        ...envArgs,
        '--entrypoint',
        'node',
        image('dutil-operator'),
        '/app/bin/dutil.js',
        ...args,
      ]
      // Asynchronously: this process serves the input files the job downloads.
      return new Promise((resolve) => {
        execFile(docker, argv, { encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => {
          resolve({
            status: err
              ? typeof (err as { code?: unknown }).code === 'number'
                ? (err as { code: number }).code
                : null
              : 0,
            stdout,
            stderr,
            output: `${stdout}${stderr}`,
          })
        })
      })
    }

    it('runs every command the README shows: run, jobs wait / list / get / cancel, callbacks redeliver', async () => {
      const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')
      const shown = new Set(
        [...readme.matchAll(/\bdutil (run|jobs \w+|callbacks \w+|keys [\w-]+|admin \w+)/g)].map((m) => m[1]),
      )
      const ran = new Set<string>()
      const url = files.add('image-cli.pdf', await makePdf(2))

      const waited = await cli(['run', 'split-pdf', '--url', url, '--wait', '--out', '/out', '--json'])
      ran.add('run')
      expect(waited.status, waited.output).toBe(0)
      expect(JSON.parse(waited.stdout)).toMatchObject({
        status: 'succeeded',
        utility: 'split-pdf',
        result: { files: [{ name: expect.any(String) }, { name: expect.any(String) }] },
      })

      const started = await cli(['run', 'split-pdf', '--url', url])
      expect(started.status, started.output).toBe(0)
      const id = started.stdout.trim().split(' ')[0]
      expect(id).toMatch(/^job_/)
      const done = await cli(['jobs', 'wait', id, '--timeout', '60', '--json'])
      ran.add('jobs wait')
      expect(done.status, done.output).toBe(0)
      expect(JSON.parse(done.stdout)).toMatchObject({ id, status: 'succeeded' })
      const listed = await cli(['jobs', 'list', '--status', 'succeeded', '--limit', '10', '--json'])
      ran.add('jobs list')
      expect(listed.status, listed.output).toBe(0)
      expect(JSON.parse(listed.stdout).map((j: { id: string }) => j.id)).toContain(id)
      const got = await cli(['jobs', 'get', id])
      ran.add('jobs get')
      expect(got.status, got.output).toBe(0)
      expect(got.stdout).toContain(id)
      // Only a queued job can be cancelled: this one has finished (409 conflict, exit 3).
      const cancel = await cli(['jobs', 'cancel', id])
      ran.add('jobs cancel')
      expect(cancel.status, cancel.output).toBe(3)
      expect(cancel.stderr).toMatch(/409 conflict/)
      // From a kubeconfig, in the platform's namespace: the job is read, and it has no callback to send again.
      const dir = readableKubeconfig()
      try {
        const redeliver = await cli(
          ['callbacks', 'redeliver', id],
          { KUBECONFIG: join(dir, 'kubeconfig'), DUTIL_NAMESPACE: inject('programEnv').DUTIL_NAMESPACE },
          dir,
        )
        ran.add('callbacks redeliver')
        expect(redeliver.status, redeliver.output).toBe(1)
        expect(redeliver.stderr).toContain(`cannot redeliver ${id}: The job has no callback.`)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
      // keys and admin: the NOTES tests above run them in this image.
      for (const c of [
        'keys create',
        'keys list',
        'keys revoke',
        'keys rotate-secret',
        'keys reveal-secret',
        'admin create',
      ])
        ran.add(c)
      expect([...shown].filter((c) => !ran.has(c))).toEqual([])
    })
  })

  it('gives html-pdf a headless Chromium with fonts that prints a PDF under the same restrictions', () => {
    const ref = imageExists(image('dutil-runner-html-pdf'))
      ? image('dutil-runner-html-pdf')
      : image('dutil-runner-html-pdf-browser')
    expect(imageExists(ref), `${ref} (make images)`).toBe(true)
    const html = encodeURIComponent('<h1>Invoice Grüße Привет 你好</h1>')
    const res = dockerRun([
      ...RESTRICTED,
      '--tmpfs',
      '/tmp:rw,size=256m',
      '--shm-size',
      '256m',
      '--entrypoint',
      'sh',
      ref,
      '-c',
      `chromium-headless-shell --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --disable-background-networking --disable-component-update --disable-sync --print-to-pdf=/tmp/out.pdf 'data:text/html;charset=utf-8,${html}' >/dev/null 2>&1; head -c 5 /tmp/out.pdf; fc-list | wc -l`,
    ])
    expect(res.status, res.stderr).toBe(0)
    const [magic, fonts] = [res.stdout.slice(0, 5), Number(res.stdout.slice(5).trim())]
    expect(magic).toBe('%PDF-')
    expect(fonts).toBeGreaterThan(20)
  })
})

/** A copy of the platform's kubeconfig, with its certificates beside it, that the image's user (10001) can read. */
function readableKubeconfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dutil-image-kube-'))
  const kc = parse(readFileSync(inject('kubeconfigPath'), 'utf8'))
  for (const c of kc.clusters)
    c.cluster['certificate-authority'] = copyReadable(c.cluster['certificate-authority'], dir)
  for (const u of kc.users) {
    u.user['client-certificate'] = copyReadable(u.user['client-certificate'], dir)
    u.user['client-key'] = copyReadable(u.user['client-key'], dir)
  }
  writeFileSync(join(dir, 'kubeconfig'), stringify(kc))
  chmodSync(join(dir, 'kubeconfig'), 0o644)
  chmodSync(dir, 0o755)
  return dir
}

function copyReadable(file: string, dir: string): string {
  const target = join(dir, file.replaceAll('/', '_'))
  copyFileSync(file, target)
  chmodSync(target, 0o644)
  return target
}
