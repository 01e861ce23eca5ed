import { createHash } from 'node:crypto'
import http from 'node:http'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { keyTenant, tenantCode } from '../../contract/tenants.js'
import { openDatabase, type Database } from '../../platform/db/database.js'
import { storageClient } from '../../platform/storage-client.js'
import { UploadSweeper } from '../../operator/upload-sweep.js'
import { makePdf } from '../support/pdfs.js'
import { officeDocument } from '../support/fixtures.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'
import { api, download } from './helpers/api.js'
import { createKey } from './helpers/keys.js'
import { listKeys } from './helpers/storage.js'
import { restartGateway } from './helpers/processes.js'

/**
 * Uploads (POST /v1/files, docs/api.md): a file of the caller's own, streamed to storage, usable
 * by its own jobs by its s3:// name until it expires; another key gets 404 for it everywhere. The
 * gateway runs with small upload quotas for this file, then with its defaults again.
 */
const QUOTA = { DUTIL_UPLOAD_MAX_FILES_PER_KEY: '3', DUTIL_UPLOAD_MAX_BYTES_PER_KEY: String(4 * 1024 ** 2) }

let db: Database
beforeAll(async () => {
  db = openDatabase({ url: inject('databaseUrl'), applicationName: 'dutil-test' })
  await restartGateway(QUOTA)
})
afterAll(async () => {
  await restartGateway({})
  await db.end()
})

/** POST /v1/files with the raw body, as curl --data-binary sends it. */
async function upload(key: string, body: Buffer, query = '', contentType = 'application/octet-stream') {
  const res = await fetch(`${inject('gatewayUrl')}/v1/files${query}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': contentType },
    body,
  })
  return { status: res.status, headers: res.headers, body: (await res.json()) as any }
}

describe('an upload', () => {
  it('is stored whole with its size, SHA-256 and sniffed type, listed, and read by its own jobs by its s3:// name', async () => {
    const { key, id: keyId } = await createKey()
    const pdf = await makePdf(3)
    const res = await upload(key, pdf, '?name=report%202026.pdf', 'text/plain')
    expect(res.status).toBe(201)
    const file = res.body
    expect(file).toMatchObject({
      object: 'file',
      name: 'report 2026.pdf',
      size: pdf.length,
      sha256: createHash('sha256').update(pdf).digest('hex'),
      contentType: 'application/pdf', // by its content, not the Content-Type sent
      url: expect.stringMatching(
        new RegExp(
          `^s3://${inject('storage').bucket}/uploads/${tenantCode(keyTenant(keyId))}/\\d{4}-\\d{2}-\\d{2}/${file.id}/report%202026\\.pdf$`,
        ),
      ),
    })
    expect(file.id).toMatch(/^file_[0-9A-HJKMNP-TV-Z]{26}$/)
    expect(Date.parse(file.expiresAt) - Date.parse(file.createdAt)).toBe(86_400_000)
    expect(res.headers.get('location')).toBe(`/v1/files/${file.id}`)
    expect((await api('GET', `/v1/files/${file.id}`, { key })).body).toEqual(file)
    expect((await api('GET', '/v1/files', { key })).body).toEqual({ items: [file], nextCursor: null })
    const split = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url: file.url } } })
    expect(split.body).toMatchObject({ status: 'succeeded', result: { pageCount: 3 } })
    expect((await download(split.body.result.files[2].url)).status).toBe(200)
    // merge-pdf names it twice, beside a job's output.
    const merged = await api('POST', '/v1/utilities/merge-pdf', {
      key,
      body: {
        input: {
          files: [{ url: file.url }, { url: `s3://${inject('storage').bucket}/${split.body.result.files[0].key}` }],
        },
      },
    })
    expect(merged.body).toMatchObject({ status: 'succeeded', result: { pageCount: 4 } })
  })

  it("is another key's nowhere: 404 to read, delete or run on, and absent from its list", async () => {
    const owner = await createKey()
    const other = await createKey()
    const file = (await upload(owner.key, await makePdf(1), '?name=private.pdf')).body
    expect((await api('GET', `/v1/files/${file.id}`, { key: other.key })).status).toBe(404)
    expect((await api('DELETE', `/v1/files/${file.id}`, { key: other.key })).status).toBe(404)
    expect((await api('GET', '/v1/files', { key: other.key })).body.items).toEqual([])
    const run = await api('POST', '/v1/utilities/split-pdf', { key: other.key, body: { input: { url: file.url } } })
    expect(run.status).toBe(404)
    expect(run.body.error.code).toBe('not_found')
    // Still the owner's.
    expect((await api('GET', `/v1/files/${file.id}`, { key: owner.key })).status).toBe(200)
  })

  it('cannot be used once expired or deleted, and the sweep removes an expired one from storage', async () => {
    const { key } = await createKey()
    const expiring = (await upload(key, await makePdf(1), '?name=soon.pdf&expiresInSeconds=60')).body
    expect(Date.parse(expiring.expiresAt) - Date.parse(expiring.createdAt)).toBe(60_000)
    const deleted = (await upload(key, await makePdf(1), '?name=gone.pdf')).body
    expect((await api('DELETE', `/v1/files/${deleted.id}`, { key })).status).toBe(204)
    // A minute passes.
    await db.query("UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = $1", [expiring.id])
    for (const f of [expiring, deleted]) {
      expect((await api('GET', `/v1/files/${f.id}`, { key })).status, f.name).toBe(404)
      const run = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url: f.url } } })
      expect(run.status, f.name).toBe(404)
    }
    expect((await api('GET', '/v1/files', { key })).body.items).toEqual([])
    const prefix = (f: { url: string }) => decodeURIComponent(new URL(f.url).pathname.slice(1))
    expect(await listKeys(prefix(deleted))).toEqual([])
    expect(await listKeys(prefix(expiring))).toHaveLength(1)
    const storage = inject('storage')
    await new UploadSweeper({
      db,
      storage: storageClient(storage),
      bucket: storage.bucket,
      log: pino({ level: 'silent' }),
    }).sweep()
    expect(await listKeys(prefix(expiring))).toEqual([])
  })

  it('refuses a bad name or expiry, and pages a list by cursor', async () => {
    const { key } = await createKey()
    for (const [query, path] of [
      ['?name=a/b.pdf', 'name'],
      ['?name=..', 'name'],
      [`?name=${encodeURIComponent('é'.repeat(128))}`, 'name'], // 256 bytes of UTF-8
      ['?expiresInSeconds=59', 'expiresInSeconds'],
      ['?expiresInSeconds=99999999', 'expiresInSeconds'],
    ]) {
      const res = await upload(key, Buffer.from('x'), query)
      expect(res.status, query).toBe(400)
      expect(res.body.error).toMatchObject({ code: 'invalid_request', details: [{ path }] })
    }
    const empty = await upload(key, Buffer.alloc(0), '?name=empty.pdf')
    expect(empty.status).toBe(400)
    expect(empty.body.error).toMatchObject({
      code: 'invalid_request',
      details: [{ path: 'body', message: 'is empty' }],
    })
    const ids: string[] = []
    for (const n of [1, 2, 3]) ids.push((await upload(key, Buffer.from(`file ${n}`), `?name=f${n}.txt`)).body.id)
    const first = (await api('GET', '/v1/files?limit=2', { key })).body
    expect(first.items.map((f: { id: string }) => f.id)).toEqual([ids[2], ids[1]])
    const second = (await api('GET', `/v1/files?limit=2&cursor=${first.nextCursor}`, { key })).body
    expect(second).toEqual({
      items: [expect.objectContaining({ id: ids[0], contentType: 'application/octet-stream' })],
      nextCursor: null,
    })
    expect((await api('GET', '/v1/files?cursor=nonsense', { key })).status).toBe(400)
  })
})

describe('upload limits', () => {
  it("answers 429 past the key's quota of files or bytes, storing nothing of the refused file, and has room again after a delete", async () => {
    const { key } = await createKey()
    const before = await listKeys('uploads/')
    const kept = []
    for (let i = 0; i < 3; i++) kept.push((await upload(key, Buffer.from(`small ${i}`), `?name=s${i}.txt`)).body)
    const fourth = await upload(key, Buffer.from('one too many'), '?name=s3.txt')
    expect(fourth.status).toBe(429)
    expect(fourth.body.error.code).toBe('rate_limited')
    expect(fourth.body.error.message).toContain('3 files')
    expect((await listKeys('uploads/')).filter((k) => !before.includes(k))).toHaveLength(3)
    expect((await api('DELETE', `/v1/files/${kept[0].id}`, { key })).status).toBe(204)
    // Bytes: 4 MiB per key here; a 5 MiB file passes the per-file limit but not the key's.
    const big = await upload(key, Buffer.alloc(5 * 1024 ** 2, 7), '?name=big.bin')
    expect(big.status).toBe(429)
    expect(big.body.error.message).toContain('4 MB')
    expect((await upload(key, Buffer.from('fits'), '?name=fits.txt')).status).toBe(201)
    // Uploads of one key at once take turns at its quota: exactly 3 of 6 are stored.
    const { key: racing } = await createKey()
    const statuses = await Promise.all(
      Array.from({ length: 6 }, (_, i) => upload(racing, Buffer.from(`racing ${i}`), `?name=r${i}.txt`)),
    ).then((answers) => answers.map((a) => a.status).sort())
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429])
    expect((await api('GET', '/v1/files', { key: racing })).body.items).toHaveLength(3)
  })

  it('refuses a body announced larger than 1 GiB before reading it, and ends one that trickles, leaving nothing usable', async () => {
    const { key } = await createKey()
    const before = await listKeys('uploads/')
    const url = new URL(`${inject('gatewayUrl')}/v1/files?name=huge.bin`)
    const send = (length: number, write: (req: http.ClientRequest) => void) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          url,
          { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Length': String(length) } },
          (res) => {
            let body = ''
            res.on('data', (c) => (body += c))
            res.on('end', () => resolve({ status: res.statusCode!, body }))
          },
        )
        req.on('error', reject)
        write(req)
      })
    const huge = await send(2 * 1024 ** 3, (req) => req.write(Buffer.alloc(1024)))
    expect(huge.status).toBe(400)
    expect(JSON.parse(huge.body).error.message).toContain('larger than 1 GB')
    // 1 MB announced, 10 bytes sent: the request time limit ends it.
    const started = Date.now()
    const trickled = await send(1024 ** 2, (req) => req.write(Buffer.alloc(10))).catch((err: Error) => ({
      status: 0,
      body: err.message,
    }))
    expect([0, 408]).toContain(trickled.status)
    expect(Date.now() - started).toBeLessThan(30_000)
    expect((await api('GET', '/v1/files', { key })).body.items).toEqual([])
    expect((await listKeys('uploads/')).filter((k) => !before.includes(k))).toEqual([])
  })

  it('takes an archive a job unpacks: unzip-files on an uploaded .zip', async () => {
    const { key } = await createKey()
    const zip = writeZip([fileEntry('a.txt', Buffer.from('alpha')), fileEntry('b/c.txt', Buffer.from('gamma'))])
    const file = (await upload(key, zip, '?name=bundle.zip')).body
    expect(file.contentType).toBe('application/zip')
    const res = await api('POST', '/v1/utilities/unzip-files', { key, body: { input: { url: file.url } } })
    expect(res.body).toMatchObject({ status: 'succeeded', result: { fileCount: 2 } })
  })
})

describe('the file in the request', () => {
  /** A run route with a multipart body, as curl -F sends it. */
  async function runForm(
    key: string,
    path: string,
    parts: Array<[string, Buffer | string, string?]>,
    headers: Record<string, string> = {},
  ) {
    const form = new FormData()
    for (const [name, value, fileName] of parts)
      form.append(name, typeof value === 'string' ? value : new Blob([value]), ...(fileName ? [fileName] : []))
    return fetch(`${inject('gatewayUrl')}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, ...headers },
      body: form,
    })
  }

  it("answers a sync run's one PDF as its bytes when Accept asks for PDF, its job id in Dutil-Job-Id; the file became an upload of the key", async () => {
    const { key } = await createKey()
    const res = await runForm(key, '/v1/utilities/split-pdf', [['file', await makePdf(1), 'one page.pdf']], {
      Accept: 'application/pdf',
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    expect(res.headers.get('content-disposition')).toBe(
      'attachment; filename="page-001.pdf"; filename*=UTF-8\'\'page-001.pdf',
    )
    const bytes = Buffer.from(await res.arrayBuffer())
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-')
    const jobId = res.headers.get('dutil-job-id')!
    const job = (await api('GET', `/v1/jobs/${jobId}`, { key })).body
    expect(job).toMatchObject({ status: 'succeeded', result: { pageCount: 1 } })
    expect(Number(res.headers.get('content-length'))).toBe(job.result.files[0].size)
    const [upload] = (await api('GET', '/v1/files', { key })).body.items
    expect(upload).toMatchObject({ name: 'one page.pdf', contentType: 'application/pdf' })
    // Without that Accept, the same call answers the job as JSON.
    const json = await runForm(key, '/v1/utilities/split-pdf', [['file', await makePdf(2), 'two.pdf']])
    expect(json.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await json.json()).toMatchObject({ status: 'succeeded', result: { pageCount: 2 } })
  })

  it('merges several files in order, takes the input options, metadata and an async route, and replays an Idempotency-Key without storing again', async () => {
    const { key } = await createKey()
    const merged = await runForm(key, '/v1/utilities/merge-pdf', [
      ['files', await makePdf(2), 'a.pdf'],
      ['files', await makePdf(3), 'b.pdf'],
      ['metadata', JSON.stringify({ ticket: 'T-7' })],
    ])
    expect(await merged.json()).toMatchObject({
      status: 'succeeded',
      result: { pageCount: 5 },
      metadata: { ticket: 'T-7' },
    })
    const form = async () =>
      runForm(
        key,
        '/v1/utilities/office-pdf/jobs',
        [
          ['file', officeDocument('three-pages.docx'), 'report.docx'],
          ['input', JSON.stringify({ pageRanges: '2-3' })],
        ],
        { 'Idempotency-Key': 'form-1' },
      )
    const first = await form()
    expect(first.status).toBe(202)
    const queued = (await first.json()) as { id: string }
    const again = await form()
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(((await again.json()) as { id: string }).id).toBe(queued.id)
    const done = (await api('GET', `/v1/jobs/${queued.id}?wait=60`, { key })).body
    expect(done).toMatchObject({ status: 'succeeded', result: { pageCount: 2 } })
    // Two merge inputs and one report: the replay stored nothing.
    expect((await api('GET', '/v1/files', { key })).body.items).toHaveLength(3)
  })

  it('refuses a form without a file, with an unknown field, with two files for one document, or that is no multipart at all: 400, no job', async () => {
    const { key } = await createKey()
    const pdf = await makePdf(1)
    for (const [what, parts, path] of [
      ['no file', [['input', '{}']], 'file'],
      [
        'an unknown field',
        [
          ['file', pdf, 'a.pdf'],
          ['colour', 'red'],
        ],
        'colour',
      ],
      [
        'two files for split-pdf',
        [
          ['file', pdf, 'a.pdf'],
          ['file', pdf, 'b.pdf'],
        ],
        'file',
      ],
      [
        'input that is not an object',
        [
          ['file', pdf, 'a.pdf'],
          ['input', '[1]'],
        ],
        'input',
      ],
    ] as const) {
      // A key each: files a refused form carried stay uploads of its key (this file's quota is 3).
      const own = (await createKey()).key
      const res = await runForm(own, '/v1/utilities/split-pdf', parts as never)
      expect(res.status, what).toBe(400)
      expect(((await res.json()) as any).error, what).toMatchObject({ code: 'invalid_request', details: [{ path }] })
      expect((await api('GET', '/v1/jobs', { key: own })).body.items, what).toEqual([])
    }
    const broken = await fetch(`${inject('gatewayUrl')}/v1/utilities/split-pdf`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'multipart/form-data; boundary=x' },
      body: '--x\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\nno end',
    })
    expect(broken.status).toBe(400)
    expect((await api('GET', '/v1/jobs', { key })).body.items).toEqual([])
  })
})
