import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import {
  ConflictError,
  DutilClient,
  DutilConnectionError,
  InvalidRequestError,
  type Job,
  JobFailedError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  verifyCallback,
} from '../../clients/typescript/src/index.js'
import { CallbackReceiver } from '../support/callback-receiver.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { fileScratch } from '../support/file-scratch.js'
import { createKey } from './helpers/keys.js'

/** clients/typescript against the running platform: what an API client's code sees. */
let files: FileServer
let receiver: CallbackReceiver
let client: DutilClient
let signingSecret: string
/** The local files the tests upload (one of them 150 MB), removed when they end. */
const scratch = fileScratch('dutil-client-files-')
const gateway = () => inject('gatewayUrl')

beforeAll(async () => {
  files = await new FileServer().start()
  const tls = inject('callbackTls')
  receiver = await new CallbackReceiver({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }).start()
  const created = await createKey()
  signingSecret = created.signingSecret
  client = new DutilClient({ baseUrl: gateway(), apiKey: created.key })
})
afterAll(async () => {
  await files.stop()
  await receiver.stop()
})

describe('the TypeScript client', () => {
  it('run() resolves with the succeeded job and its files', async () => {
    const url = files.add('c3.pdf', await makePdf(3))
    const job = await client.run('split-pdf', { url }, { metadata: { ticket: 'T-9' } })
    expect(job).toMatchObject({ status: 'succeeded', utility: 'split-pdf', mode: 'sync', metadata: { ticket: 'T-9' } })
    expect(job.result?.files).toHaveLength(3)
  })

  it('submit() + wait() follow an async job to the end, reporting each state (and progress) on the way', async () => {
    files.add('slow.pdf', await makePdf(4))
    const queued = await client.submit('split-pdf', { url: `${files.url}/slow/slow.pdf?ms=1500` })
    expect(queued).toMatchObject({ status: 'queued', mode: 'async' })
    const seen: Job[] = []
    const done = await client.wait(queued.id, { onUpdate: (j) => seen.push(j) })
    expect(done.status).toBe('succeeded')
    expect(done.progress).toMatchObject({ done: 4, total: 4, unit: 'pages' })
    expect(seen.at(-1)?.status).toBe('succeeded')
    expect(await client.get(queued.id)).toMatchObject({ id: queued.id, status: 'succeeded' })
  })

  it('throws JobFailedError with the job and its code when the job fails', async () => {
    const url = files.add('no.pdf', Buffer.from('<html>no</html>'), 'text/html')
    const err = await client.run('split-pdf', { url }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(JobFailedError)
    expect(err).toMatchObject({
      code: 'upstream_rejected',
      job: { status: 'failed', error: { code: 'upstream_rejected' } },
    })
  })

  it('throws a typed error per error code: invalid request (with details), not found, conflict, unauthorized', async () => {
    const invalid = await client.run('split-pdf', {} as never).catch((e: unknown) => e)
    expect(invalid).toBeInstanceOf(InvalidRequestError)
    expect((invalid as InvalidRequestError).details.map((d) => d.path)).toContain('input.url')
    expect(await client.get('job_01ARZ3NDEKTSV4RRFFQ69G5FAV').catch((e: unknown) => e)).toBeInstanceOf(NotFoundError)
    const url = files.add('c1.pdf', await makePdf(1))
    const finished = await client.run('split-pdf', { url })
    expect(await client.cancel(finished.id).catch((e: unknown) => e)).toBeInstanceOf(ConflictError)
    const stranger = new DutilClient({
      baseUrl: gateway(),
      apiKey: 'du_live_000000000000000000000000000000000000000000000000',
    })
    expect(await stranger.utilities().catch((e: unknown) => e)).toBeInstanceOf(UnauthorizedError)
  })

  it('throws RateLimitedError with retryAfter once the key spends its budget (a call without retries; by default the client waits Retry-After and tries again)', async () => {
    const limited = await createKey({ rateLimitPerMinute: 2 })
    const c = new DutilClient({ baseUrl: gateway(), apiKey: limited.key })
    await c.utilities()
    await c.utilities()
    const err = await c.utilities({ maxRetries: 0 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RateLimitedError)
    expect((err as RateLimitedError).retryAfter).toBeGreaterThan(0)
    expect((err as RateLimitedError).retryAfter).toBeLessThanOrEqual(60)
  })

  it('list() walks every page of the key’s jobs, newest first, with filters', async () => {
    const own = await createKey()
    const c = new DutilClient({ baseUrl: gateway(), apiKey: own.key })
    const url = files.add('l.pdf', await makePdf(1))
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await c.run('split-pdf', { url })).id)
    const listed: string[] = []
    for await (const job of c.list({ pageSize: 2 })) listed.push(job.id)
    expect(listed).toEqual([...ids].reverse())
    const none: string[] = []
    for await (const job of c.list({ status: 'failed' })) none.push(job.id)
    expect(none).toEqual([])
  })

  it('verifyCallback() accepts the signed callback the platform sends and refuses a tampered one', async () => {
    const url = files.add('cb.pdf', await makePdf(2))
    const hook = receiver.url('/client-hook', 200)
    const job = await client.submit('split-pdf', { url }, { callbackUrl: hook })
    const [got] = await receiver.waitFor('/client-hook', 1)
    const event = verifyCallback(got.body, got.headers, signingSecret)
    expect(event).toMatchObject({ type: 'job.succeeded', data: { id: job.id, status: 'succeeded' } })
    expect(() => verifyCallback(got.body.replace('succeeded', 'failed'), got.headers, signingSecret)).toThrow()
  })

  it('uploads a local file by path, bytes or stream, runs utilities on it in one call, lists and deletes it', async () => {
    const pdf = await makePdf(2)
    const path = join(scratch, 'local report.pdf')
    writeFileSync(path, pdf)
    const sha256 = createHash('sha256').update(pdf).digest('hex')
    const fromPath = await client.uploadFile(path)
    expect(fromPath).toMatchObject({
      name: 'local report.pdf',
      size: pdf.length,
      sha256,
      contentType: 'application/pdf',
    })
    const fromStream = await client.uploadFile(createReadStream(path), { name: 'streamed.pdf', expiresInSeconds: 600 })
    expect(fromStream).toMatchObject({ name: 'streamed.pdf', size: pdf.length, sha256 })
    expect(Date.parse(fromStream.expiresAt) - Date.parse(fromStream.createdAt)).toBe(600_000)
    const job = await client.runFile('split-pdf', pdf, {}, { name: 'bytes.pdf' })
    expect(job).toMatchObject({ status: 'succeeded', result: { pageCount: 2 } })
    const merged = await client.run('merge-pdf', { files: [{ url: fromPath.url }, { url: fromStream.url }] })
    expect(merged.result?.pageCount).toBe(4)
    const listed: string[] = []
    for await (const f of client.files({ pageSize: 1 })) listed.push(f.id)
    expect(listed).toEqual(expect.arrayContaining([fromPath.id, fromStream.id]))
    await client.deleteFile(fromPath.id)
    await expect(client.getFile(fromPath.id)).rejects.toBeInstanceOf(NotFoundError)
    expect((await client.getFile(fromStream.id)).id).toBe(fromStream.id)
    await expect(client.uploadFile(path, { name: 'a/b.pdf' })).rejects.toBeInstanceOf(InvalidRequestError)
  })

  it('sends a large file straight to storage in parts, a few at once, reporting its progress', async () => {
    const bytes = Buffer.concat([await makePdf(1), randomBytes(150 * 1024 ** 2)])
    const path = join(scratch, 'large.pdf')
    writeFileSync(path, bytes)
    const seen: number[] = []
    const upload = await client.uploadFile(path, {
      onProgress: (sent, total) => (expect(total).toBe(bytes.length), seen.push(sent)),
    })
    expect(upload).toMatchObject({
      name: 'large.pdf',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    })
    // Three parts (64 + 64 + the rest), reported as each is sent: the last report is the whole file.
    expect(seen).toHaveLength(3)
    expect(seen.at(-1)).toBe(bytes.length)
    expect([...seen].sort((a, b) => a - b)).toEqual(seen)
    const small = await client.uploadFile(await makePdf(1), { direct: true, name: 'small.pdf' })
    expect(small).toMatchObject({ name: 'small.pdf', contentType: 'application/pdf' })
  })

  it('throws DutilConnectionError when nothing answers at the base URL', async () => {
    const nowhere = new DutilClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'x' })
    expect(await nowhere.utilities().catch((e: unknown) => e)).toBeInstanceOf(DutilConnectionError)
  })
})
