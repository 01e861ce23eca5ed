import { createHash, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { uploadPutOf } from './files-host.js'
import { UploadDigests } from './upload-digests.js'

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

/** Sends a part through the digests as the files host does, in chunks; storage answers `etag`. */
function pass(d: UploadDigests, key: string, n: number, bytes: Buffer, etag: string, uploadId?: string) {
  const tap = d.begin(key, n, uploadId)
  if (!tap) return false
  for (let i = 0; i < bytes.length; i += 1000) tap.update(bytes.subarray(i, i + 1000))
  tap.stored(`"${etag}"`, bytes.length)
  return true
}

describe('UploadDigests', () => {
  const parts = [randomBytes(3000), randomBytes(2500), randomBytes(700)]
  const whole = Buffer.concat(parts)

  it("gives a multipart upload's SHA-256 and first bytes when its parts passed one after another", () => {
    const d = new UploadDigests()
    parts.forEach((p, i) => expect(pass(d, 'uploads/a', i + 1, p, `e${i + 1}`, 'u1')).toBe(true))
    expect(d.take('uploads/a', ['e1', '"e2"', 'e3'], 'u1')).toEqual({
      sha256: sha(whole),
      head: whole.subarray(0, 512),
    })
    expect(d.size).toBe(0)
  })

  it("gives a single PUT's digest by the ETag storage holds", () => {
    const d = new UploadDigests()
    pass(d, 'uploads/b', 1, whole, 'one')
    expect(d.take('uploads/b', ['other'])).toBeUndefined()
    pass(d, 'uploads/b', 1, whole, 'one')
    expect(d.take('uploads/b', ['one'])?.sha256).toBe(sha(whole))
  })

  it('knows nothing of a part whose part before did not pass here first, or of parts sent at once', () => {
    const d = new UploadDigests()
    expect(pass(d, 'uploads/c', 2, parts[1], 'e2', 'u')).toBe(false)
    const first = d.begin('uploads/c', 1, 'u')!
    expect(d.begin('uploads/c', 2, 'u')).toBeUndefined()
    first.update(parts[0])
    first.stored('e1', parts[0].length)
    expect(d.take('uploads/c', ['e1', 'e2'], 'u')).toBeUndefined()
  })

  it('refuses a chain when a part before was sent again after the one that continued it', () => {
    const d = new UploadDigests()
    pass(d, 'uploads/d', 1, parts[0], 'e1', 'u')
    pass(d, 'uploads/d', 2, parts[1], 'e2', 'u')
    const changed = randomBytes(3000)
    pass(d, 'uploads/d', 1, changed, 'e1b', 'u')
    expect(d.take('uploads/d', ['e1b', 'e2'], 'u')).toBeUndefined()
  })

  it('keeps nothing of a part whose hashed length is not the length declared, or another upload id', () => {
    const d = new UploadDigests()
    const tap = d.begin('uploads/e', 1)!
    tap.update(parts[0])
    tap.stored('e1', parts[0].length + 1)
    expect(d.take('uploads/e', ['e1'])).toBeUndefined()
    pass(d, 'uploads/e', 1, parts[0], 'e1', 'u1')
    expect(d.take('uploads/e', ['e1'], 'u2')).toBeUndefined()
  })

  it('holds at most its bound of parts, and none past their time', () => {
    let now = 0
    const d = new UploadDigests(2, 1000, () => now)
    pass(d, 'k1', 1, parts[0], 'a')
    pass(d, 'k2', 1, parts[0], 'b')
    pass(d, 'k3', 1, parts[0], 'c')
    expect(d.size).toBe(2)
    expect(d.take('k1', ['a'])).toBeUndefined()
    now = 5000
    pass(d, 'k4', 1, parts[0], 'd')
    expect(d.size).toBe(1)
    expect(d.take('k4', ['d'])?.sha256).toBe(sha(parts[0]))
  })
})

describe('uploadPutOf', () => {
  it("reads an upload PUT's key, part and upload id from its presigned path", () => {
    expect(uploadPutOf('/dutil/uploads/2026/file_1/a%20b.pdf?X-Amz-Signature=x')).toEqual({
      key: 'uploads/2026/file_1/a b.pdf',
      partNumber: 1,
    })
    expect(uploadPutOf('/dutil/uploads/2026/file_1/a.pdf?partNumber=3&uploadId=abc&X-Amz-Signature=x')).toEqual({
      key: 'uploads/2026/file_1/a.pdf',
      partNumber: 3,
      uploadId: 'abc',
    })
    expect(uploadPutOf('/dutil/uploads/2026/file_1/a.pdf?partNumber=0&uploadId=abc')).toBeUndefined()
    expect(uploadPutOf('/dutil/uploads/2026/file_1/a.pdf?partNumber=2')).toBeUndefined()
  })
})
