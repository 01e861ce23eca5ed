import { createHash, randomBytes } from 'node:crypto'
import pino from 'pino'
import { describe, expect, inject, it } from 'vitest'
import { UploadSweeper } from '../../operator/upload-sweep.js'
import { openDatabase } from '../../platform/db/database.js'
import { storageClient } from '../../platform/storage-client.js'
import { createdAtOfId } from '../../contract/ids.js'
import { makePdf } from '../support/pdfs.js'
import { api } from './helpers/api.js'
import { createKey } from './helpers/keys.js'
import { metricValue } from './helpers/processes.js'
import { listKeys } from './helpers/storage.js'
import { keyTenant, tenantCode } from '../../contract/tenants.js'

/** Where a key's upload is stored: `uploads/<its code>/<day>/<file id>/`. */
const uploadDir = (keyId: string, fileId: string) =>
  `uploads/${tenantCode(keyTenant(keyId))}/${createdAtOfId(fileId, 'file')!.slice(0, 10)}/${fileId}/`

/**
 * Direct uploads (POST /v1/files?size=, docs/api.md): the file goes straight to storage by the
 * presigned PUTs the answer gives (through the files host), one or one per part, and is a file only
 * once completed with storage holding exactly the size announced.
 */
interface Offer {
  id: string
  object: string
  size: number
  partSize: number
  parts: Array<{ partNumber: number; url: string }>
  completeUrl: string
  expiresAt: string
}

async function announce(key: string, size: number, name = 'big.pdf') {
  return api('POST', `/v1/files?name=${encodeURIComponent(name)}&size=${size}`, { key })
}

/** Sends each part's bytes to its presigned URL; the ETags storage answered. */
async function sendParts(offer: Offer, bytes: Buffer) {
  const tags: Array<{ partNumber: number; etag: string }> = []
  for (const p of offer.parts) {
    const res = await fetch(p.url, {
      method: 'PUT',
      body: bytes.subarray((p.partNumber - 1) * offer.partSize, p.partNumber * offer.partSize),
    })
    expect(res.status, await res.clone().text()).toBe(200)
    tags.push({ partNumber: p.partNumber, etag: res.headers.get('etag')! })
  }
  return tags
}

const complete = (key: string, offer: Offer, parts?: unknown) =>
  api('POST', offer.completeUrl, { key, body: parts === undefined ? undefined : { parts } })

/** Completions so far by where their SHA-256 came from (the gateway's metrics). */
async function digestSources() {
  const text = await (await fetch(`${inject('gatewayUrl')}/metrics`)).text()
  const of = (source: string) => metricValue(text, `dutil_direct_upload_digests_total{source="${source}"}`) ?? 0
  return { passing: of('hashed_in_passing'), readBack: of('read_back') }
}

describe('a direct upload', () => {
  it('goes to storage by one presigned PUT through the files host and is a file only once completed', async () => {
    const { key, id: keyId } = await createKey()
    const pdf = await makePdf(2)
    const res = await announce(key, pdf.length, 'direct.pdf')
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    const offer = res.body as Offer
    expect(offer).toMatchObject({ object: 'direct_upload', size: pdf.length, partSize: pdf.length })
    expect(offer.parts).toHaveLength(1)
    // Through the files host, never storage's own endpoint.
    expect(new URL(offer.parts[0].url).origin).not.toBe(new URL(inject('storage').endpoint).origin)
    const url = `s3://${inject('storage').bucket}/${uploadDir(keyId, offer.id)}direct.pdf`
    // Pending: not a file yet. No job can name it, nothing shows it, completing it early is refused.
    expect((await api('GET', `/v1/files/${offer.id}`, { key })).status).toBe(404)
    expect((await api('GET', '/v1/files', { key })).body.items).toEqual([])
    expect((await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url } } })).status).toBe(404)
    const early = await complete(key, offer)
    expect(early.status).toBe(400)
    expect(early.body.error.details).toEqual([{ path: 'id', message: 'has not been sent' }])
    await sendParts(offer, pdf)
    // Another key cannot complete it; its owner can, and again (the same file).
    expect((await complete((await createKey()).key, offer)).status).toBe(404)
    const done = await complete(key, offer)
    expect(done.status, JSON.stringify(done.body)).toBe(200)
    expect(done.body).toMatchObject({
      id: offer.id,
      object: 'file',
      name: 'direct.pdf',
      size: pdf.length,
      contentType: 'application/pdf',
      sha256: createHash('sha256').update(pdf).digest('hex'),
      url,
    })
    expect(Date.parse(done.body.expiresAt) - Date.now()).toBeGreaterThan(86_000_000)
    expect((await complete(key, offer)).body).toEqual(done.body)
    expect((await api('GET', `/v1/files/${offer.id}`, { key })).body).toEqual(done.body)
    const split = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url } } })
    expect(split.body).toMatchObject({ status: 'succeeded', result: { pageCount: 2 } })
  })

  it('takes a large file in presigned parts, assembled from the ETags storage gave them', async () => {
    const { key } = await createKey()
    const bytes = Buffer.concat([await makePdf(1), randomBytes(70 * 1024 ** 2)])
    const offer = (await announce(key, bytes.length)).body as Offer
    expect(offer.partSize).toBe(64 * 1024 ** 2)
    expect(offer.parts.map((p) => p.partNumber)).toEqual([1, 2])
    const tags = await sendParts(offer, bytes)
    const wrong = await complete(key, offer, [tags[0]])
    expect(wrong.status).toBe(400)
    expect(wrong.body.error.details).toEqual([{ path: 'parts', message: 'must be parts 1 to 2' }])
    const before = await digestSources()
    const done = await complete(key, offer, tags)
    expect(done.status, JSON.stringify(done.body)).toBe(200)
    expect(done.body).toMatchObject({
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      contentType: 'application/pdf',
    })
    // Parts sent one after another were hashed as they passed, not read back (other tests'
    // uploads may complete meanwhile: the counts only grow).
    expect((await digestSources()).passing).toBeGreaterThanOrEqual(before.passing + 1)
  })

  it('reads the file back for its SHA-256 when its parts were not hashed in order (the last sent first, one sent again)', async () => {
    const { key } = await createKey()
    const bytes = Buffer.concat([await makePdf(1), randomBytes(70 * 1024 ** 2)])
    const offer = (await announce(key, bytes.length)).body as Offer
    const reversed = { ...offer, parts: [...offer.parts].reverse() }
    const tags = (await sendParts(reversed, bytes)).reverse()
    const before = await digestSources()
    const done = await complete(key, offer, tags)
    expect(done.body).toMatchObject({ size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') })
    expect((await digestSources()).readBack).toBeGreaterThanOrEqual(before.readBack + 1)

    // Part 1 sent again with other bytes after part 2 continued the first: the chain no longer holds.
    const other = (await announce(key, bytes.length)).body as Offer
    const first = await sendParts(other, bytes)
    const changed = Buffer.from(bytes)
    changed[10] ^= 1
    const again = await sendParts({ ...other, parts: [other.parts[0]] }, changed)
    const then = await digestSources()
    const redone = await complete(key, other, [again[0], first[1]])
    expect(redone.body).toMatchObject({ sha256: createHash('sha256').update(changed).digest('hex') })
    expect((await digestSources()).readBack).toBeGreaterThanOrEqual(then.readBack + 1)
  })

  it('refuses a file other than announced, leaving nothing; and what is no upload link, or too large', async () => {
    const { key, id: keyId } = await createKey()
    const offer = (await announce(key, 1000, 'short.bin')).body as Offer
    await sendParts({ ...offer, partSize: 999 }, randomBytes(999))
    const res = await complete(key, offer)
    expect(res.status).toBe(400)
    expect(res.body.error.message).toMatch(/holds 999 bytes of this upload; 1000 were announced/)
    expect((await complete(key, offer)).status).toBe(404)
    expect(await listKeys(uploadDir(keyId, offer.id))).toEqual([])
    // A longer body than announced is refused alike.
    const long = (await announce(key, 1000, 'long.bin')).body as Offer
    await sendParts({ ...long, partSize: 1001 }, randomBytes(1001))
    expect((await complete(key, long)).body.error.message).toMatch(
      /holds 1001 bytes of this upload; 1000 were announced/,
    )
    // The signature covers the object: a link cannot write another key.
    const other = new URL(offer.parts[0].url)
    other.pathname = other.pathname.replace('short.bin', 'other.bin')
    expect((await fetch(other, { method: 'PUT', body: 'x' })).status).toBe(403)
    expect((await announce(key, 1024 ** 3 + 1)).status).toBe(400)
    expect((await announce(key, 0)).body.error.details).toEqual([
      { path: 'size', message: 'must be a positive integer' },
    ])
    const withBody = await fetch(`${inject('gatewayUrl')}/v1/files?size=3`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: 'abc',
    })
    expect(withBody.status).toBe(400)
  })

  it('is swept, parts and all, when its window closes uncompleted', async () => {
    const { key, id: keyId } = await createKey()
    const offer = (await announce(key, 65 * 1024 ** 2)).body as Offer
    await fetch(offer.parts[0].url, { method: 'PUT', body: randomBytes(64 * 1024 ** 2) })
    const s = inject('storage')
    const pending = async () => {
      const keys: string[] = []
      const list = storageClient(s).listIncompleteUploads(
        s.bucket,
        // MinIO lists a multipart upload by its object's whole name.
        `${uploadDir(keyId, offer.id)}big.pdf`,
        true,
      )
      for await (const u of list as AsyncIterable<{ key: string }>) keys.push(u.key)
      return keys
    }
    expect(await pending()).toHaveLength(1)
    const db = openDatabase({ url: inject('databaseUrl'), applicationName: 'dutil-test' })
    try {
      // The hour passes.
      await db.query("UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = $1", [offer.id])
      await new UploadSweeper({
        db,
        storage: storageClient(s),
        bucket: s.bucket,
        log: pino({ level: 'silent' }),
      }).sweep()
    } finally {
      await db.end()
    }
    expect(await pending()).toEqual([])
    expect((await complete(key, offer)).status).toBe(404)
  })
})

describe('a large file through the gateway', () => {
  it('is streamed to storage whole, announced or not (a raw body, and a file part of a form in 8 MiB parts)', async () => {
    const { key } = await createKey()
    const bytes = Buffer.concat([await makePdf(1), randomBytes(20 * 1024 ** 2 + 12345)])
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    const raw = await fetch(`${inject('gatewayUrl')}/v1/files?name=raw.pdf`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: bytes,
    })
    expect(raw.status).toBe(201)
    expect(await raw.json()).toMatchObject({ size: bytes.length, sha256 })
    const form = new FormData()
    form.append('file', new Blob([bytes]), 'part.pdf')
    form.append('input', JSON.stringify({ pageRanges: '1' }))
    const run = await fetch(`${inject('gatewayUrl')}/v1/utilities/split-pdf/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: form,
    })
    // split-pdf takes no pageRanges: the form's file is stored, then the input is refused.
    expect(run.status).toBe(400)
    const files = (await api('GET', '/v1/files', { key })).body.items as Array<{
      name: string
      size: number
      sha256: string
    }>
    expect(files.find((f) => f.name === 'part.pdf')).toMatchObject({ size: bytes.length, sha256 })
  })
})
