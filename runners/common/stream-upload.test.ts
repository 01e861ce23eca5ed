import type { ObjectStore } from './object-store.js'
import { describe, expect, it } from 'vitest'
import { rejected } from './runner-error.js'
import { uploadStream } from './stream-upload.js'

/** A stand-in for the S3 client that records calls and can fail on demand. */
function fakeClient(opts: { failPart?: number } = {}) {
  const calls: string[] = []
  const parts = new Map<number, Buffer>()
  let inFlight = 0
  let maxInFlight = 0
  const client = {
    bucket: 'b',
    async initiateMultipart(key: string) {
      calls.push(`initiate ${key}`)
      return 'upload-1'
    },
    async uploadPart(_key: string, _id: string, partNumber: number, payload: Buffer) {
      const cfg = { partNumber }
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      const copy = Buffer.from(payload) // the uploader may reuse its buffer once this resolves
      await new Promise((r) => setTimeout(r, 2))
      inFlight--
      if (cfg.partNumber === opts.failPart) throw new Error('boom')
      parts.set(cfg.partNumber, copy)
      calls.push(`part ${cfg.partNumber} ${payload.length}`)
      return `e${cfg.partNumber}`
    },
    async completeMultipart(_k: string, _id: string, etags: { part: number; etag: string }[]) {
      calls.push(`complete ${etags.map((e) => `${e.part}:${e.etag}`).join(',')}`)
    },
    async abortMultipart() {
      calls.push('abort')
    },
    async putObject(key: string, body: Buffer) {
      calls.push(`put ${key} ${body.length}`)
      parts.set(1, Buffer.from(body))
    },
  }
  return { client: client as unknown as ObjectStore, calls, parts, maxInFlight: () => maxInFlight }
}

async function* chunks(total: number, size: number, failAt?: number) {
  let sent = 0
  let i = 0
  while (sent < total) {
    if (failAt !== undefined && sent >= failAt) throw rejected('the source broke')
    const n = Math.min(size, total - sent)
    yield Buffer.alloc(n, i++ % 251)
    sent += n
  }
}

const target = (store: ObjectStore) => ({ store, key: 'out.zip', contentType: 'application/zip' })

describe('uploadStream', () => {
  it('sends a small output as one PUT', async () => {
    const f = fakeClient()
    const r = await uploadStream(chunks(1000, 100), target(f.client), 1024)
    expect(r.size).toBe(1000)
    expect(f.calls).toEqual(['put out.zip 1000'])
  })

  it('splits a large output into parts of the part size, at most one in flight, and completes in order', async () => {
    const f = fakeClient()
    const r = await uploadStream(chunks(10_000, 333), target(f.client), 1024, true)
    expect(r.size).toBe(10_000)
    expect(f.calls[0]).toBe('initiate out.zip')
    expect(f.calls.filter((c) => c.startsWith('part')).map((c) => Number(c.split(' ')[2]))).toEqual([
      ...Array(9).fill(1024),
      10_000 - 9 * 1024,
    ])
    expect(f.calls.at(-1)).toBe(`complete ${Array.from({ length: 10 }, (_, i) => `${i + 1}:e${i + 1}`).join(',')}`)
    expect(f.maxInFlight()).toBe(1)
    // The bytes arrive intact, in order.
    const joined = Buffer.concat([...f.parts.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b))
    const expected: Buffer[] = []
    for await (const c of chunks(10_000, 333)) expected.push(c)
    expect(joined.equals(Buffer.concat(expected))).toBe(true)
  })

  it('gives the same parts and bytes for an output announced as large (whole part buffer at once), with and without overlap', async () => {
    for (const overlap of [false, true]) {
      const f = fakeClient()
      const r = await uploadStream(chunks(10_000, 333), { ...target(f.client), large: true }, 1024, overlap)
      expect(r.size).toBe(10_000)
      expect(f.calls.filter((c) => c.startsWith('part')).map((c) => Number(c.split(' ')[2]))).toEqual([
        ...Array(9).fill(1024),
        10_000 - 9 * 1024,
      ])
      const joined = Buffer.concat([...f.parts.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b))
      const expected: Buffer[] = []
      for await (const c of chunks(10_000, 333)) expected.push(c)
      expect(joined.equals(Buffer.concat(expected))).toBe(true)
    }
  })

  it('holds one part at a time unless asked to overlap', async () => {
    const f = fakeClient()
    await uploadStream(chunks(10_000, 333), target(f.client), 1024)
    expect(f.calls.filter((c) => c.startsWith('part'))).toHaveLength(10)
    const joined = Buffer.concat([...f.parts.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b))
    const expected: Buffer[] = []
    for await (const c of chunks(10_000, 333)) expected.push(c)
    expect(joined.equals(Buffer.concat(expected))).toBe(true)
  })

  it('passes a source failure through unchanged and aborts the upload', async () => {
    const f = fakeClient()
    await expect(uploadStream(chunks(10_000, 500, 5000), target(f.client), 1024)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'the source broke',
    })
    expect(f.calls.at(-1)).toBe('abort')
  })

  it('turns a storage failure into storage_error and aborts the upload', async () => {
    const f = fakeClient({ failPart: 2 })
    await expect(uploadStream(chunks(10_000, 500), target(f.client), 1024)).rejects.toMatchObject({
      code: 'storage_error',
    })
    expect(f.calls.at(-1)).toBe('abort')
  })
})
