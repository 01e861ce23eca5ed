import { createHash, randomBytes } from 'node:crypto'
import { describe, expect, inject, it } from 'vitest'
import { putStreamed } from '../../platform/streamed-put.js'
import { storageClient } from '../../platform/storage-client.js'

const MiB = 1024 * 1024
const s = () => inject('storage')

/** `bytes` as a body of unknown length, in chunks of `size` (the last one shorter), failing after `failAfter` chunks if given. */
async function* chunked(bytes: Buffer, size: number, failAfter?: number): AsyncGenerator<Buffer> {
  for (let at = 0, n = 0; at < bytes.length; at += size, n++) {
    if (n === failAfter) throw new Error('the client went away')
    yield bytes.subarray(at, at + size)
  }
}

async function stored(key: string): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const c of await storageClient(s()).getObject(s().bucket, key)) parts.push(c as Buffer)
  return Buffer.concat(parts)
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

describe('a body of unknown length streamed into storage (putStreamed), on real MinIO', () => {
  it('stores a small body as one object, its type kept', async () => {
    const key = `tests/streamed/small-${Date.now()}`
    const body = randomBytes(3000)
    await putStreamed(
      storageClient(s()),
      { bucket: s().bucket, key, contentType: 'application/pdf' },
      chunked(body, 700),
    )
    expect(sha(await stored(key))).toBe(sha(body))
    expect((await storageClient(s()).statObject(s().bucket, key)).metaData['content-type']).toBe('application/pdf')
  })

  it('stores a larger body in parts cut across its chunks, byte for byte', async () => {
    const key = `tests/streamed/parts-${Date.now()}`
    // Three parts of 5 MiB (S3's smallest) from chunks that do not divide them, and a last short part.
    const body = randomBytes(15 * MiB + 7)
    await putStreamed(
      storageClient(s()),
      { bucket: s().bucket, key, contentType: 'application/octet-stream' },
      chunked(body, 100_003),
      5 * MiB,
    )
    const got = await stored(key)
    expect(got.length).toBe(body.length)
    expect(sha(got)).toBe(sha(body))
  })

  it('passes a failing body on and leaves neither an object nor an unfinished upload', async () => {
    const key = `tests/streamed/failed-${Date.now()}`
    const body = randomBytes(12 * MiB)
    await expect(
      putStreamed(
        storageClient(s()),
        { bucket: s().bucket, key, contentType: 'application/octet-stream' },
        chunked(body, 1 * MiB, 11),
        5 * MiB,
      ),
    ).rejects.toThrow('the client went away')
    await expect(storageClient(s()).statObject(s().bucket, key)).rejects.toMatchObject({ code: 'NotFound' })
    const pending = []
    for await (const u of storageClient(s()).listIncompleteUploads(s().bucket, key, true)) pending.push(u)
    expect(pending).toEqual([])
  })
})
