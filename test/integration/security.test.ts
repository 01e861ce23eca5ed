import http from 'node:http'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { BatchV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { SECRET_OBJECTS, SecretEntries } from '../../platform/secret-entries.js'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  JOB_RECORD_FINALIZER,
  LABELS,
  MANAGED_BY,
  UTILITY_JOB,
} from '../../contract/api-group.js'
import { catalog } from '../../runners/catalog.js'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { newId, objectNameOf } from '../../contract/ids.js'
import {
  inputObjectKey,
  progressObjectKey,
  resultObjectKey,
  type RunnerResult,
} from '../../contract/runner-protocol.js'
import { storageClient, writeJsonObject } from '../../platform/storage-client.js'
import { isoMs } from '../../contract/time.js'
import { desiredJob } from '../../operator/desired-job.js'
import { s3ObjectStore } from '../../runners/common/object-store.js'
import { BIN_DIR } from '../platform/platform.js'
import { until } from '../platform/wait-for.js'
import { componentProcess } from './helpers/processes.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'
import { api, download } from './helpers/api.js'
import { createKey, keyAdmin, kubeConfig, kubeConfigWithOnly } from './helpers/keys.js'
import { ConsoleClient } from './helpers/console.js'

/**
 * Attacks a review found (docs/security.md), performed as a tenant holding one ordinary key
 * would, against the real platform. Each failed before its fix.
 */
let files: FileServer
beforeAll(async () => {
  files = await new FileServer().start()
})
afterAll(() => files.stop())

describe('s3:// inputs across tenants', () => {
  it("refuses another tenant's outputs, the service's own records and every spelling trick with 404, and creates no job", async () => {
    const a = await createKey({ name: 'tenant-a' })
    const b = await createKey({ name: 'tenant-b' })
    const bucket = inject('storage').bucket
    const secret = await api('POST', '/v1/utilities/split-pdf', {
      key: a.key,
      body: { input: { url: files.add('secret.pdf', await makePdf(2)) } },
    })
    expect(secret.status).toBe(200)
    const pageKey: string = secret.body.result.files[1].key
    const jobA: string = secret.body.id
    const attempts = [
      ['split-pdf', `s3://${bucket}/${pageKey}`],
      ['html-pdf', `s3://${bucket}/_jobs/${jobA}/input.json`],
      ['html-pdf', `s3://${bucket}/_jobs/${jobA}/result.json`],
      ['unzip-files', `s3://${bucket}/usage/daily/${secret.body.createdAt.slice(0, 10)}.json`],
      ['split-pdf', `s3://${bucket}/${pageKey.replace(/[^/]+$/, '')}..%2F..%2F..%2F_jobs%2F${jobA}%2Finput.json`],
      ['split-pdf', `s3://${bucket.toUpperCase()}/${pageKey}`],
      ['split-pdf', `s3://${bucket}.s3.amazonaws.com/${pageKey}`],
      ['split-pdf', `s3://${bucket}//${pageKey}`],
    ] as const
    for (const [utility, url] of attempts) {
      const res = await api('POST', `/v1/utilities/${utility}/jobs`, { key: b.key, body: { input: { url } } })
      expect(res.status, url).toBe(404)
      expect(res.body.error.code, url).toBe('not_found')
      expect(JSON.stringify(res.body), url).not.toContain(jobA)
    }
    expect((await api('GET', '/v1/jobs', { key: b.key })).body.items).toEqual([])
    // The owner chains its own output: same URL, its key.
    const own = await api('POST', '/v1/utilities/split-pdf', {
      key: a.key,
      body: { input: { url: `s3://${bucket}/${pageKey}` } },
    })
    expect(own.status).toBe(200)
    expect(own.body.result.pageCount).toBe(1)
    expect((await download(own.body.result.files[0].url)).status).toBe(200)
  })
})

describe('idempotency when the first create is slow', () => {
  it('gives a retry that arrives long after the first request (still creating) the same job', async () => {
    const { key } = await createKey()
    const url = files.add('slow-create.pdf', await makePdf(1))
    const headers = { 'Idempotency-Key': `slow-${Date.now()}` }
    // Storage hangs: the first request is stuck writing its input, as a slow create would be.
    const minio = componentProcess('minio').pid
    process.kill(-minio, 'SIGSTOP')
    let first: Promise<{ status: number; headers: Headers; body: any }>
    let second: Promise<{ status: number; headers: Headers; body: any }>
    try {
      first = api('POST', '/v1/utilities/split-pdf/jobs', { key, headers, body: { input: { url } } })
      // Longer than the few seconds the old Redis claim lived.
      await new Promise((r) => setTimeout(r, 6000))
      second = api('POST', '/v1/utilities/split-pdf/jobs', { key, headers, body: { input: { url } } })
      await new Promise((r) => setTimeout(r, 1000))
    } finally {
      process.kill(-minio, 'SIGCONT')
    }
    const [a, b] = await Promise.all([first!, second!])
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    expect(b.body.id).toBe(a.body.id)
    expect([a.headers.get('idempotent-replayed'), b.headers.get('idempotent-replayed')].filter(Boolean)).toEqual([
      'true',
    ])
    expect((await api('GET', '/v1/jobs', { key })).body.items.map((j: { id: string }) => j.id)).toEqual([a.body.id])
  })
})

describe('a compromised runner', () => {
  /**
   * A job whose "runner" is the attacker's code: the objects it leaves in storage are written
   * first, then its UtilityJob and its Job (running `script` instead of the utility), made while
   * the operator is paused so that the Job is this one.
   */
  async function forgedRun(
    utility: string,
    keyId: string,
    script: string,
    leave: (jobId: string, s3: ReturnType<typeof storageClient>) => Promise<void>,
  ): Promise<string> {
    const storage = inject('storage')
    const s3 = storageClient(storage)
    const now = Date.now()
    const jobId = newId('job', now)
    const custom = kubeConfig().makeApiClient(CustomObjectsApi)
    const batch = kubeConfig().makeApiClient(BatchV1Api)
    const operator = componentProcess('operator').pid
    process.kill(operator, 'SIGSTOP')
    try {
      await writeJsonObject(s3, storage.bucket, inputObjectKey(jobId), { url: 'https://example.invalid/x.pdf' })
      await leave(jobId, s3)
      const uj = (await custom.createNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: 'dutil',
        plural: UTILITY_JOB.plural,
        body: {
          apiVersion: API_GROUP_VERSION,
          kind: 'UtilityJob',
          metadata: {
            name: objectNameOf(jobId),
            labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.utility]: utility },
            finalizers: [JOB_RECORD_FINALIZER],
          },
          spec: {
            jobId,
            utility,
            mode: 'async',
            apiKeyId: keyId,
            apiKeyName: 'attacker',
            createdAt: isoMs(now),
            inputKey: inputObjectKey(jobId),
            metadata: null,
          },
        },
      })) as UtilityJobResource
      const settings = {
        imageRegistry: 'dutil.local',
        imageTag: 'dev',
        storage: { endpoint: storage.endpoint, region: storage.region, bucket: storage.bucket },
        allowLoopbackUrls: false,
        jobTtlSeconds: 60,
      }
      const job = desiredJob(uj, catalog.get(utility)!, settings, {
        accessKey: 'ASIATEMP',
        secretKey: 'temp-secret',
        sessionToken: 'temp-token',
        expiresAt: '2026-11-22T10:15:00.000Z',
      })
      job.spec!.template.spec!.containers[0].command = ['/bin/sh', '-c', script]
      await batch.createNamespacedJob({ namespace: 'dutil', body: job })
    } finally {
      process.kill(operator, 'SIGCONT')
    }
    return jobId
  }

  const finished = async (jobId: string, key: string) => {
    await until(
      'the job finished',
      async () => ['succeeded', 'failed'].includes((await api('GET', `/v1/jobs/${jobId}`, { key })).body.status),
      60_000,
      250,
    )
    return (await api('GET', `/v1/jobs/${jobId}`, { key })).body
  }
  const operatorLogged = (jobId: string, what: string) =>
    readFileSync(join(inject('platformDir'), 'logs', 'operator.log'), 'utf8')
      .split('\n')
      .some((l) => l.includes(jobId) && l.includes(what))

  it('cannot make the API hand out links to other objects: a forged result manifest fails the job as internal', async () => {
    // Another tenant's output, which the forged manifest will claim.
    const victim = await createKey({ name: 'victim' })
    const theirs = await api('POST', '/v1/utilities/split-pdf', {
      key: victim.key,
      body: { input: { url: files.add('victim.pdf', await makePdf(1)) } },
    })
    expect(theirs.status).toBe(200)
    const { key, id: keyId } = await createKey({ name: 'attacker' })
    const jobId = await forgedRun('split-pdf', keyId, 'exit 0', async (id, s3) => {
      const forged: RunnerResult = {
        files: [
          { key: theirs.body.result.files[0].key, name: 'loot.pdf', size: 1, contentType: 'application/pdf' },
          { key: `_jobs/${theirs.body.id}/input.json`, name: 'input.json', size: 1, contentType: 'application/json' },
        ],
        extras: { pageCount: 1 },
        startedAt: isoMs(Date.now()),
        upstreamMs: 1,
        storageMs: 1,
      }
      await writeJsonObject(s3, inject('storage').bucket, resultObjectKey(id), forged)
    })
    const res = await finished(jobId, key)
    expect(res).toMatchObject({ status: 'failed', result: null, error: { code: 'internal' } })
    expect(JSON.stringify(res)).not.toContain(theirs.body.id)
    expect(operatorLogged(jobId, 'runner result manifest refused')).toBe(true)
  })

  it('cannot exhaust the operator with a 64 MB result manifest: it is not read past its bound and the job fails as internal', async () => {
    const { key, id: keyId } = await createKey({ name: 'attacker' })
    const huge = Buffer.alloc(64 * 1024 * 1024, 0x20)
    huge.write('{"files":[', 0)
    const jobId = await forgedRun('split-pdf', keyId, 'exit 0', async (id, s3) => {
      await s3.putObject(inject('storage').bucket, resultObjectKey(id), huge, huge.length, {
        'Content-Type': 'application/json',
      })
    })
    expect(await finished(jobId, key)).toMatchObject({
      status: 'failed',
      result: null,
      error: { code: 'internal', message: "The job's result could not be accepted." },
    })
    expect(operatorLogged(jobId, 'runner output refused')).toBe(true)
    expect(componentProcess('operator').running()).toBe(true)
  })

  it('cannot exhaust the operator with a 16 MB progress report: the running job fails as internal and its Job is deleted', async () => {
    const { key, id: keyId } = await createKey({ name: 'attacker' })
    const huge = Buffer.alloc(16 * 1024 * 1024, 0x20)
    huge.write('{"done":1,"total":2,"at":"', 0)
    const jobId = await forgedRun('zip-files', keyId, 'sleep 120', async (id, s3) => {
      await s3.putObject(inject('storage').bucket, progressObjectKey(id), huge, huge.length, {
        'Content-Type': 'application/json',
      })
    })
    expect(await finished(jobId, key)).toMatchObject({ status: 'failed', error: { code: 'internal' } })
    expect(operatorLogged(jobId, 'runner output refused')).toBe(true)
    const batch = kubeConfig().makeApiClient(BatchV1Api)
    await until(
      'its Job deleted',
      async () =>
        (await batch.listNamespacedJob({ namespace: 'dutil', labelSelector: `${LABELS.jobId}=${objectNameOf(jobId)}` }))
          .items.length === 0,
      30_000,
    )
  })
})

describe('malformed ids and bodies', () => {
  it('answers an id past the ULID range with 404 on GET and cancel, and as an s3:// input', async () => {
    const { key } = await createKey({ name: 'ids' })
    const id = 'job_ZZZZZZZZZZZZZZZZZZZZZZZZZZ'
    for (const [method, path] of [
      ['GET', `/v1/jobs/${id}`],
      ['POST', `/v1/jobs/${id}/cancel`],
    ] as const) {
      const res = await api(method, path, { key })
      expect(res.status, path).toBe(404)
      expect(res.body.error.code).toBe('not_found')
    }
    const s3 = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key,
      body: { input: { url: `s3://${inject('storage').bucket}/split-pdf/2026-11-24/${id}/page-001.pdf` } },
    })
    expect(s3.status).toBe(404)
    expect(s3.body.error.code).toBe('not_found')
  })

  it('answers a body nested 100,000 levels deep with 400 invalid_request, and creates no job', async () => {
    const { key } = await createKey({ name: 'deep' })
    const deep = `{"input":{"url":"https://example.com/a.pdf"},"metadata":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`
    const res = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key,
      rawBody: deep,
      headers: { 'Content-Type': 'application/json' },
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({
      code: 'invalid_request',
      message: 'The request body nests arrays and objects deeper than 32 levels.',
    })
    expect((await api('GET', '/v1/jobs', { key })).body.items).toEqual([])
  })
})

describe('crafted outputs on the files host', () => {
  it('serves HTML and SVG outputs as downloads that no browser renders: attachment, octet-stream, nosniff, a CSP sandbox on every file', async () => {
    const { key } = await createKey()
    const script = '<script>fetch("/dutil/", { credentials: "include" })</script>'
    const zip = writeZip([
      fileEntry('evil.html', Buffer.from(`<!doctype html><title>x</title>${script}`)),
      fileEntry('evil.svg', Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)),
      fileEntry('notes.txt', Buffer.from('plain text')),
    ])
    const res = await api('POST', '/v1/utilities/unzip-files', {
      key,
      body: { input: { url: files.add('crafted.zip', zip, 'application/zip') } },
    })
    expect(res.status).toBe(200)
    const byName = Object.fromEntries(
      res.body.result.files.map((f: { name: string; url: string; contentType: string }) => [f.name, f]),
    )
    // The job still says what each file is; the link decides how a browser treats it.
    expect(byName['evil.html'].contentType).toMatch(/^text\/html/)
    for (const name of ['evil.html', 'evil.svg']) {
      const got = await fetch(byName[name].url)
      expect(got.status, name).toBe(200)
      expect(got.headers.get('content-disposition'), name).toBe(
        `attachment; filename="${name}"; filename*=UTF-8''${name}`,
      )
      expect(got.headers.get('content-type'), name).toBe('application/octet-stream')
      expect(got.headers.get('x-content-type-options'), name).toBe('nosniff')
    }
    const txt = await fetch(byName['notes.txt'].url)
    expect(txt.headers.get('content-disposition')).toMatch(/^attachment; filename="notes.txt"/)
    expect(txt.headers.get('content-type')).toMatch(/^text\/plain/)
    expect(await txt.text()).toBe('plain text')
    // The files host's own headers, on every download whatever storage sends (gateway/files-host.ts).
    for (const f of Object.values(byName) as Array<{ name: string; url: string }>) {
      const got = await fetch(f.url)
      expect(got.headers.get('content-security-policy'), f.name).toBe(
        "sandbox; default-src 'none'; frame-ancestors 'none'",
      )
      expect(got.headers.get('x-content-type-options'), f.name).toBe('nosniff')
      await got.arrayBuffer()
    }
    // Storage still checks every link: one changed by a byte, or another verb, gets nothing.
    const tampered = byName['notes.txt'].url.replace('notes.txt', 'evil.html')
    expect((await fetch(tampered)).status).toBe(403)
    expect((await fetch(byName['notes.txt'].url, { method: 'PUT', body: 'x' })).status).toBe(404)
    // Storage's own endpoints, listings and unsigned requests never reach it through the files
    // host, whatever Host the caller sends; a link keeps working under a Host of the caller's.
    const origin = new URL(byName['notes.txt'].url).origin
    const bucket = new URL(byName['notes.txt'].url).pathname.split('/')[1]
    const raw = (path: string, host?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) =>
        http
          .get(`${origin}${path}`, host ? { headers: { host } } : {}, (r) => {
            let body = ''
            r.on('data', (c) => (body += c))
            r.on('end', () => resolve({ status: r.statusCode!, body }))
          })
          .on('error', reject),
      )
    for (const [path, host] of [
      ['/minio/health/live', undefined],
      ['/minio/health/live', 'storage.internal'],
      [`/${bucket}/`, undefined],
      [`/${bucket}/?list-type=2`, undefined],
      [new URL(byName['notes.txt'].url).pathname, undefined],
    ] as const) {
      const got = await raw(path, host)
      expect(got.status, path).toBe(404)
      expect(JSON.parse(got.body).error.code).toBe('not_found')
    }
    const link = new URL(byName['notes.txt'].url)
    const forged = await raw(link.pathname + link.search, 'attacker.example')
    expect(forged).toEqual({ status: 200, body: 'plain text' })
    // Ranges pass through.
    const part = await fetch(byName['notes.txt'].url, { headers: { Range: 'bytes=0-4' } })
    expect(part.status).toBe(206)
    expect(await part.text()).toBe('plain')
  })
})

/** Sum of kube-apiserver's own request counter for LISTs of ApiKeys. */
/** Requests the API server has served for a resource and verb (its own counter). */
function apiRequests(resource: string, verb: string): number {
  const text = execFileSync(
    join(BIN_DIR, 'kubectl'),
    ['--kubeconfig', inject('kubeconfigPath'), 'get', '--raw', '/metrics'],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  )
  let sum = 0
  for (const line of text.split('\n')) {
    if (
      line.startsWith('apiserver_request_total{') &&
      line.includes(`resource="${resource}"`) &&
      line.includes(`verb="${verb}"`)
    )
      sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}
const apiKeyLists = () => apiRequests('apikeys', 'LIST')

describe('the cost of a request before authentication', () => {
  it('1,000 requests with distinct random keys cost the API server a handful of requests and answer 401', async () => {
    const before = apiKeyLists()
    const started = Date.now()
    const statuses: number[] = []
    for (let batch = 0; batch < 20; batch++) {
      const res = await Promise.all(
        Array.from({ length: 50 }, () => api('GET', '/v1/jobs', { key: `du_live_${randomBytes(24).toString('hex')}` })),
      )
      statuses.push(...res.map((r) => r.status))
    }
    expect(new Set(statuses)).toEqual(new Set([401]))
    const cost = apiKeyLists() - before
    // The shared look-up budget is 5 a second (burst 5): a handful for the few seconds the flood
    // takes (more seconds on a busy machine, never more than the budget allows).
    const seconds = Math.ceil((Date.now() - started) / 1000)
    expect(cost).toBeLessThanOrEqual(5 + 5 * seconds)
    const metrics = await (await fetch(`${inject('gatewayUrl')}/metrics`)).text()
    expect(Number(/dutil_key_lookups_total\{outcome="over_budget"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(900)
    // A key made a moment ago still works once the watch has it.
    await untilAccepted((await createKey()).key)
  })

  it('200 made-up invite links and 100 sign-ins of unknown e-mails cost the API server a handful of requests', async () => {
    const [invitesBefore, usersBefore] = [apiRequests('consoleinvites', 'LIST'), apiRequests('consoleusers', 'GET')]
    // Each from an address of its own (the tests are the trusted proxy): only the shared budget limits them.
    const invites = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        new ConsoleClient().call(
          'POST',
          '/invites/lookup',
          { token: randomBytes(32).toString('base64url') },
          {
            forwardedFor: `198.18.20.${i}`,
          },
        ),
      ),
    )
    expect(new Set(invites.map((r) => r.status))).toEqual(new Set([404]))
    const signIns = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        new ConsoleClient().call(
          'POST',
          '/session',
          { email: `nobody-${i}-${Date.now()}@example.com`, password: 'not the password' },
          { forwardedFor: `198.18.21.${i}` },
        ),
      ),
    )
    expect([...new Set(signIns.map((r) => r.status))].every((s) => s === 401 || s === 429)).toBe(true)
    // The budget is 5 a second (burst 5), shared with unknown API keys.
    expect(apiRequests('consoleinvites', 'LIST') - invitesBefore).toBeLessThanOrEqual(30)
    expect(apiRequests('consoleusers', 'GET') - usersBefore).toBeLessThanOrEqual(30)
  })

  it('limits console requests before sign-in per client address', async () => {
    // The count is per minute of the clock: start well inside one, so all 350 land in it.
    const intoMinute = Date.now() % 60_000
    if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 200))
    const statuses: number[] = []
    for (let batch = 0; batch < 7; batch++) {
      const res = await Promise.all(
        Array.from({ length: 50 }, () =>
          new ConsoleClient().call(
            'POST',
            '/invites/lookup',
            { token: 'a'.repeat(43) },
            { forwardedFor: '198.18.30.1' },
          ),
        ),
      )
      statuses.push(...res.map((r) => r.status))
    }
    // The test platform allows 300 a minute per address: the rest of the 350 are refused.
    const refused = statuses.filter((s) => s === 429)
    expect(refused.length).toBeGreaterThanOrEqual(50)
    expect(statuses.filter((s) => s === 404).length).toBeLessThanOrEqual(300)
    const one = await new ConsoleClient().call(
      'POST',
      '/invites/lookup',
      { token: 'a'.repeat(43) },
      {
        forwardedFor: '198.18.30.1',
      },
    )
    expect(one.status).toBe(429)
    expect(Number(one.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another address is not held back.
    expect(
      (
        await new ConsoleClient().call(
          'POST',
          '/invites/lookup',
          { token: 'a'.repeat(43) },
          { forwardedFor: '198.18.30.2' },
        )
      ).status,
    ).toBe(404)
  })

  // This test and the next wait on the gateway's timers: they wait side by side.
  it.concurrent(
    'cuts off a client that trickles its body a byte at a time (408, connection closed)',
    async () => {
      const { key } = await createKey()
      // The tests before this one spent the shared look-up budget: a key that new may be refused
      // (401) until the watch delivers it. This test is about the body, so start once it is known.
      await untilAccepted(key)
      const url = new URL(inject('gatewayUrl'))
      const socket = connect(Number(url.port), url.hostname)
      await new Promise((r) => socket.once('connect', r))
      let received = ''
      socket.on('data', (d) => (received += d.toString()))
      // A byte trickled after the gateway closed its side is answered with a reset: that ends the
      // connection too ('close' follows the error).
      socket.on('error', () => {})
      const closed = new Promise<void>((r) => socket.once('close', () => r()))
      socket.write(
        `POST /v1/utilities/split-pdf/jobs HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 600\r\n\r\n{`,
      )
      const started = Date.now()
      let sent = 1
      const trickle = setInterval(() => {
        if (!socket.destroyed && sent < 599) {
          socket.write(' ', () => {})
          sent++
        }
      }, 1000)
      try {
        // The gateway's request timeout (30 s by default, 10 s on the test platform) ends it long before the 600 s the body would take.
        await Promise.race([
          closed,
          new Promise((_, reject) => setTimeout(() => reject(new Error(`still open after ${sent} bytes`)), 90_000)),
        ])
      } finally {
        clearInterval(trickle)
        socket.destroy()
      }
      expect(received).toMatch(/^HTTP\/1\.1 408/)
      expect(sent).toBeLessThan(60)
      expect(Date.now() - started).toBeGreaterThan(5_000)
    },
    120_000,
  )

  it.concurrent(
    'keeps an idle connection open past a proxy’s 60 s idle timeout, and still cuts off headers that stall on it',
    async () => {
      const url = new URL(inject('gatewayUrl'))
      const socket = connect(Number(url.port), url.hostname)
      await new Promise((r) => socket.once('connect', r))
      let received = ''
      socket.on('data', (d) => (received += d.toString()))
      // The gateway may end a connection with a reset rather than a close ('close' follows the
      // error): only the cut-off at the end may do so.
      const errors: string[] = []
      socket.on('error', (err: NodeJS.ErrnoException) => errors.push(err.code ?? err.message))
      const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now())))
      // Answers follow one another on the connection (the next status line right after a body).
      const answers = () => received.match(/HTTP\/1\.1 \d{3}/g) ?? []
      try {
        socket.write(`GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`)
        await until('the first answer', async () => answers().length === 1, 10_000, 50)
        // What a proxy reads to know how long it may keep the connection idle.
        expect(received).toMatch(/^Keep-Alive: timeout=(\d+)/m)
        expect(Number(/^Keep-Alive: timeout=(\d+)/m.exec(received)![1])).toBeGreaterThan(60)
        // Idle past the 5 s most servers keep: the same connection answers again.
        await new Promise((r) => setTimeout(r, 6_000))
        expect(socket.destroyed).toBe(false)
        socket.write(`GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`)
        await until('the second answer on the same connection', async () => answers().length === 2, 10_000, 50)
        expect(answers()).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200'])
        expect(errors).toEqual([])
        // Headers begun and never finished: cut off at the headers timeout (10 s), not held for the keep-alive.
        const stalled = Date.now()
        socket.write(`GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\n`)
        const at = await Promise.race([
          closed,
          new Promise<number>((_, reject) => setTimeout(() => reject(new Error('still open after 40 s')), 40_000)),
        ])
        expect(at - stalled).toBeLessThan(30_000)
        expect(errors.filter((code) => code !== 'ECONNRESET')).toEqual([])
      } finally {
        socket.destroy()
      }
    },
    60_000,
  )

  it('refuses a large console body before sign-in without reading it', async () => {
    const res = await fetch(`${inject('gatewayUrl')}/console/api/session`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(200), padding: 'p'.repeat(100_000) }),
    })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      'The request body is larger than 16 KB.',
    )
  })

  it('bounds password hashing: 200 simultaneous sign-ins are answered 401 or 429 with Retry-After, never 500', async () => {
    const res = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        fetch(`${inject('gatewayUrl')}/console/api/session`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': `198.18.${i >> 8}.${i & 255}` },
          body: JSON.stringify({ email: `nobody-${i}-${Date.now()}@example.com`, password: 'not the password' }),
        }),
      ),
    )
    const statuses = res.map((r) => r.status)
    expect(new Set(statuses)).toEqual(new Set([401, 429]))
    const busy = res.filter((r) => r.status === 429)
    for (const r of busy) expect(r.headers.get('retry-after')).toBe('1')
    expect(((await busy[0].json()) as { error: { code: string } }).error.code).toBe('rate_limited')
  })
})

describe('an API key and its signing Secret', () => {
  it('never leaves a key without its own signing secret: when the secret cannot be written, no key is made either', async () => {
    const admin = keyAdmin()
    const before = (await admin.list()).length
    // Allowed to make ApiKeys but not to write Secrets: the create stops part-way, as a crash would.
    const limited = new ApiKeyAdmin(
      await kubeConfigWithOnly([
        { apiGroups: ['dutil.io'], resources: ['apikeys'], verbs: ['get', 'list', 'create', 'patch'] },
      ]),
      'dutil',
    )
    await expect(limited.create({ name: 'half-made', utilities: [] })).rejects.toThrow()
    expect((await admin.list()).filter((k) => k.spec.name === 'half-made')).toEqual([])
    expect((await admin.list()).length).toBe(before)
    // A complete create: the key's entry is in the signing Secret, and callbacks use it.
    const made = await admin.create({ name: 'whole', utilities: [] })
    const signing = new SecretEntries(kubeConfig().makeApiClient(CoreV1Api), 'dutil', SECRET_OBJECTS.signing)
    expect(await signing.get(objectNameOf(made.id))).toBe(made.signingSecret)
    expect((await admin.revealSecret(made.id)).source).toBe('key')
  })

  it('keeps every entry when many keys are made at once (each write patches only its own entry)', async () => {
    const admin = keyAdmin()
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) => admin.create({ name: `burst-${i}`, utilities: [] })),
    )
    const signing = new SecretEntries(kubeConfig().makeApiClient(CoreV1Api), 'dutil', SECRET_OBJECTS.signing)
    const all = await signing.all()
    for (const k of made) expect(all[objectNameOf(k.id)]).toBe(k.signingSecret)
  })
})

describe("a compromised runner's storage credentials", () => {
  /** The credentials the operator put in a job's runner pod (what code running there holds). */
  async function podCredentials(jobId: string) {
    const job = await kubeConfig()
      .makeApiClient(BatchV1Api)
      .readNamespacedJob({ name: objectNameOf(jobId), namespace: 'dutil' })
    const env = Object.fromEntries(job.spec!.template.spec!.containers[0].env!.map((e) => [e.name, e.value]))
    expect(job.spec!.template.spec!.containers[0].env!.some((e) => e.valueFrom)).toBe(false)
    return {
      accessKey: env.DUTIL_S3_ACCESS_KEY!,
      secretKey: env.DUTIL_S3_SECRET_KEY!,
      sessionToken: env.DUTIL_S3_SESSION_TOKEN!,
    }
  }
  const denied = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: { code?: string }) => e,
    )
    return err?.code
  }

  it.each(['split-pdf', 'xls-to-xlsx'])(
    'reach only their own job (%s): their input and outputs, never another tenant, a service record or a listing',
    async (utility) => {
      const storage = inject('storage')
      const root = storageClient(storage)
      const victim = await createKey({ name: 'victim-of-runner' })
      const theirs = await api('POST', '/v1/utilities/split-pdf', {
        key: victim.key,
        body: { input: { url: files.add('theirs.pdf', await makePdf(1)) } },
      })
      expect(theirs.status).toBe(200)
      const { key } = await createKey()
      const input =
        utility === 'split-pdf'
          ? files.add('mine.pdf', await makePdf(1))
          : files.add('mine.xls', Buffer.from('not really a workbook'), 'application/vnd.ms-excel')
      const mine = await api('POST', `/v1/utilities/${utility}`, { key, body: { input: { url: input } } })
      const creds = await podCredentials(mine.body.id)
      expect(creds.accessKey).not.toBe(storage.accessKey)
      expect(creds.sessionToken.length).toBeGreaterThan(20)
      const s3 = storageClient({ ...storage, ...creds })
      const day = mine.body.createdAt.slice(0, 10)
      const prefix = `${utility}/${day}/${mine.body.id}/`
      // Another tenant's output, another job's service records, usage archives, listing: refused by storage.
      expect(await denied(s3.getObject(storage.bucket, theirs.body.result.files[0].key))).toBe('AccessDenied')
      expect(await denied(s3.getObject(storage.bucket, `_jobs/${theirs.body.id}/input.json`))).toBe('AccessDenied')
      expect(await denied(s3.statObject(storage.bucket, `_jobs/${theirs.body.id}/result.json`))).toBeTruthy()
      expect(
        await denied(s3.putObject(storage.bucket, theirs.body.result.files[0].key, Buffer.from('overwritten'))),
      ).toBe('AccessDenied')
      expect(
        await denied(s3.putObject(storage.bucket, `${utility}/${day}/${theirs.body.id}/planted.pdf`, Buffer.from('x'))),
      ).toBe('AccessDenied')
      expect(await denied(s3.putObject(storage.bucket, `_jobs/${mine.body.id}/input.json`, Buffer.from('{}')))).toBe(
        'AccessDenied',
      )
      expect(await denied(s3.removeObject(storage.bucket, theirs.body.result.files[0].key))).toBe('AccessDenied')
      expect(
        await denied(
          new Promise((resolve, reject) => {
            const l = s3.listObjectsV2(storage.bucket, '', true)
            l.on('data', () => {})
            l.on('end', resolve)
            l.on('error', reject)
          }),
        ),
      ).toBe('AccessDenied')
      // The victim's file is untouched.
      expect(
        (await download((await api('GET', `/v1/jobs/${theirs.body.id}`, { key: victim.key })).body.result.files[0].url))
          .status,
      ).toBe(200)
      // Its own job: its input record readable (none here: the input rode with the job, sealed), a
      // large output (multipart, as the runners stream) writable under its prefix.
      expect(await denied(s3.getObject(storage.bucket, `_jobs/${mine.body.id}/input.json`))).toBe('NoSuchKey')
      const store = s3ObjectStore({ ...storage, ...creds })
      const upload = await store.initiateMultipart(`${prefix}probe.bin`, 'application/octet-stream')
      const etag = await store.uploadPart(`${prefix}probe.bin`, upload, 1, Buffer.alloc(6 * 1024 * 1024, 1))
      await store.completeMultipart(`${prefix}probe.bin`, upload, [{ part: 1, etag }])
      expect((await root.statObject(storage.bucket, `${prefix}probe.bin`)).size).toBe(6 * 1024 * 1024)
      await store.deleteObject(`${prefix}probe.bin`)
    },
  )
})

describe('what the CRDs let a writer change', () => {
  // JSON patches: a merge patch's null removes a field, which the schema refuses on its own; a
  // JSON patch can set a nullable field to null, which only the CEL rules stop.
  const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch)
  const rejected = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e as { code?: number; body?: string },
    )
    expect(err, 'the patch was accepted').not.toBeNull()
    expect(err!.code).toBe(422)
    return String(err!.body)
  }

  it("refuses a patch of a UtilityJob's callbackUrl, metadata, storageInputKeys or idempotency key; cancelRequested still goes through", async () => {
    const { key } = await createKey({ name: 'crd-rules' })
    const job = await api('POST', '/v1/utilities/split-pdf/jobs', {
      key,
      body: { input: { url: files.add('crd.pdf', await makePdf(1)) }, metadata: { a: 1 } },
    })
    expect(job.status).toBe(202)
    const custom = kubeConfig().makeApiClient(CustomObjectsApi)
    const coords = {
      group: API_GROUP,
      version: API_VERSION,
      namespace: 'dutil',
      plural: UTILITY_JOB.plural,
      name: objectNameOf(job.body.id),
    }
    for (const op of [
      { op: 'add', path: '/spec/callbackUrl', value: 'https://attacker.example.com/x' },
      { op: 'replace', path: '/spec/metadata', value: { a: 2 } },
      { op: 'replace', path: '/spec/metadata', value: null },
      {
        op: 'add',
        path: '/spec/storageInputKeys',
        value: ['split-pdf/2026-11-24/job_01ARZ3NDEKTSV4RRFFQ69G5FAV/page-001.pdf'],
      },
      { op: 'add', path: '/spec/idempotencyKeyHash', value: 'x' },
    ]) {
      expect(
        await rejected(custom.patchNamespacedCustomObject({ ...coords, body: [op] }, jsonPatch)),
        JSON.stringify(op),
      ).toContain('spec is immutable except cancelRequested')
    }
    await custom.patchNamespacedCustomObject(
      { ...coords, body: [{ op: 'add', path: '/spec/cancelRequested', value: true }] },
      jsonPatch,
    )
  })

  it("refuses clearing or changing an ApiKey's revokedAt", async () => {
    const made = await createKey({ name: 'revoked' })
    await keyAdmin().revoke(made.id)
    const custom = kubeConfig().makeApiClient(CustomObjectsApi)
    const coords = {
      group: API_GROUP,
      version: API_VERSION,
      namespace: 'dutil',
      plural: 'apikeys',
      name: objectNameOf(made.id),
    }
    for (const value of [null, '2099-01-01T00:00:00.000Z']) {
      const body = [{ op: 'replace', path: '/spec/revokedAt', value }]
      expect(await rejected(custom.patchNamespacedCustomObject({ ...coords, body }, jsonPatch))).toContain(
        'revokedAt cannot be cleared or changed once set',
      )
    }
    expect((await api('GET', '/v1/jobs', { key: made.key })).status).toBe(401)
  })
})

/** Waits until a key made a moment ago is accepted (the gateway's watch has it). */
async function untilAccepted(key: string): Promise<void> {
  await until(
    'the new key is accepted',
    async () => (await api('GET', '/v1/jobs', { key })).status === 200,
    10_000,
    200,
  )
}
