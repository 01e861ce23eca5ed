import { createCipheriv, createHash, pbkdf2Sync, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { deflateRawSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { zipArchive } from '../../platform/zip-writer.js'
import { detectOffice } from './detect.js'
import { unprotected } from './handler.js'
import { decryptOdf, encryptedParts, plainManifest } from './odf-encryption.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const doc = (name: string) => readFileSync(join(REPO, 'test', 'fixtures', 'documents', name))

const TYPE = 'application/vnd.oasis.opendocument.text'
const CONTENT =
  '<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3"><office:body><office:text><text:p>Sealed words</text:p></office:text></office:body></office:document-content>'

/**
 * An OpenDocument text protected with `password` as LibreOffice protects one (AES-256-CBC,
 * PBKDF2 of the password's SHA-256, a SHA-256 checksum of the first KB): written here, another
 * implementation than the reader's. The options change what the part holds or what the manifest
 * says of it.
 */
async function protectedOdt(
  password: string,
  o: { content?: Buffer; declaredSize?: number; algorithm?: string; declaredIterations?: number } = {},
): Promise<Buffer> {
  const content = o.content ?? Buffer.from(CONTENT)
  const salt = randomBytes(16)
  const iv = randomBytes(16)
  const iterations = 1000
  const key = pbkdf2Sync(createHash('sha256').update(password).digest(), salt, iterations, 32, 'sha1')
  const deflated = deflateRawSync(content)
  const pad = 16 - (deflated.length % 16)
  const padded = Buffer.concat([deflated, randomBytes(pad - 1), Buffer.from([pad])])
  const cipher = createCipheriv('aes-256-cbc', key, iv).setAutoPadding(false)
  const encrypted = Buffer.concat([cipher.update(padded), cipher.final()])
  const checksum = createHash('sha256').update(deflated.subarray(0, 1024)).digest('base64')
  const manifest = `<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">
 <manifest:file-entry manifest:full-path="/" manifest:version="1.3" manifest:media-type="${TYPE}"/>
 <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml" manifest:size="${o.declaredSize ?? content.length}">
  <manifest:encryption-data manifest:checksum-type="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0#sha256-1k" manifest:checksum="${checksum}">
   <manifest:algorithm manifest:algorithm-name="${o.algorithm ?? 'http://www.w3.org/2001/04/xmlenc#aes256-cbc'}" manifest:initialisation-vector="${iv.toString('base64')}"/>
   <manifest:start-key-generation manifest:start-key-generation-name="http://www.w3.org/2000/09/xmldsig#sha256" manifest:key-size="32"/>
   <manifest:key-derivation manifest:key-derivation-name="PBKDF2" manifest:key-size="32" manifest:iteration-count="${o.declaredIterations ?? iterations}" manifest:salt="${salt.toString('base64')}"/>
  </manifest:encryption-data>
 </manifest:file-entry>
</manifest:manifest>`
  const parts: Array<[string, Buffer, boolean]> = [
    ['mimetype', Buffer.from(TYPE), true],
    ['content.xml', encrypted, true],
    ['META-INF/manifest.xml', Buffer.from(manifest), false],
  ]
  const out: Buffer[] = []
  const entries = parts.map(([name, data, store]) => ({
    name,
    date: new Date(),
    store,
    data: (async function* () {
      yield data
    })(),
  }))
  for await (const chunk of zipArchive(entries, { level: 6 })) out.push(Buffer.from(chunk))
  return Buffer.concat(out)
}

describe('protected OpenDocument files', () => {
  it('opens LibreOffice\'s own protected text (the fixture, password "dutil") into a plain document the format check reads', async () => {
    const plain = await decryptOdf(doc('encrypted.odt'), 'dutil')
    expect(plain).not.toBeNull()
    expect(await detectOffice(plain!)).toBe('odt')
    await expect(decryptOdf(doc('encrypted.odt'), 'Dutil')).rejects.toMatchObject({
      reason: 'wrong_password',
      message: 'The password given does not open the document.',
    })
  })

  it('opens one written by another implementation, its words intact and its manifest plain', async () => {
    const plain = await decryptOdf(await protectedOdt('sésame ✓'), 'sésame ✓')
    expect(plain!.toString('latin1')).not.toContain('encryption-data')
    expect(await detectOffice(plain!)).toBe('odt')
    await expect(decryptOdf(await protectedOdt('a'), 'b')).rejects.toMatchObject({ reason: 'wrong_password' })
  })

  it('takes anything else as it came: no OpenDocument, or one without encryption', async () => {
    expect(await decryptOdf(doc('text.odt'), 'dutil')).toBeNull()
    expect(await decryptOdf(doc('text.docx'), 'dutil')).toBeNull()
    expect(await decryptOdf(Buffer.from('not a zip at all, long enough to look'), 'dutil')).toBeNull()
    const text = doc('text.odt')
    expect(await unprotected(text, 'dutil')).toBe(text)
  })

  it('refuses what it does not open, or what is crafted, as unsupported or damaged: never a crash, a long hash or a bomb', async () => {
    await expect(
      decryptOdf(
        await protectedOdt('x', { algorithm: 'urn:oasis:names:tc:opendocument:xmlns:manifest:1.0#blowfish' }),
        'x',
      ),
    ).rejects.toMatchObject({ reason: 'unsupported', message: expect.stringMatching(/Blowfish/) })
    await expect(
      decryptOdf(await protectedOdt('x', { algorithm: 'http://www.w3.org/2009/xmlenc11#aes256-gcm' }), 'x'),
    ).rejects.toMatchObject({ reason: 'unsupported' })
    // A key derivation far costlier than LibreOffice's is refused before any of it runs.
    await expect(decryptOdf(await protectedOdt('x', { declaredIterations: 50_000_000 }), 'x')).rejects.toMatchObject({
      reason: 'unsupported',
    })
    // A part that inflates past what its manifest declares is refused: 100 MB of zeros said to be 1 KB.
    const bomb = await protectedOdt('x', { content: Buffer.alloc(100 * 1024 ** 2), declaredSize: 1024 })
    await expect(decryptOdf(bomb, 'x')).rejects.toMatchObject({ reason: 'damaged' })
    await expect(unprotected(bomb, 'x')).rejects.toMatchObject({ code: 'upstream_rejected' })
    // Everything held at once (the parts as read, and inflated) stays within its bound.
    const large = await protectedOdt('x', { content: Buffer.alloc(2 * 1024 ** 2, 0x20) })
    expect(await decryptOdf(large, 'x', 4 * 1024 ** 2)).not.toBeNull()
    await expect(decryptOdf(large, 'x', 1024 ** 2)).rejects.toMatchObject({
      reason: 'damaged',
      message: expect.stringMatching(/within 1 MB in all/),
    })
  })

  it('reads the manifest with any namespace prefix, and leaves nothing of the encryption in the plain one', () => {
    const xml = `<m:manifest xmlns:m="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><m:file-entry m:full-path="/content.xml" m:size="10"><m:encryption-data m:checksum-type="SHA1/1K" m:checksum="AAAA"><m:algorithm m:algorithm-name="http://www.w3.org/2001/04/xmlenc#aes128-cbc" m:initialisation-vector="AAAAAAAAAAAAAAAAAAAAAA=="/><m:key-derivation m:key-derivation-name="PBKDF2" m:key-size="16" m:iteration-count="1024" m:salt="AAAA"/></m:encryption-data></m:file-entry><m:file-entry m:full-path="styles.xml"/></m:manifest>`
    expect(encryptedParts(xml)).toEqual([
      expect.objectContaining({
        path: 'content.xml',
        size: 10,
        cipher: 'aes-128-cbc',
        startKey: 'sha1',
        checksumHash: 'sha1',
        iterations: 1024,
      }),
    ])
    expect(plainManifest(xml)).toBe(
      '<m:manifest xmlns:m="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><m:file-entry m:full-path="/content.xml" m:size="10"></m:file-entry><m:file-entry m:full-path="styles.xml"/></m:manifest>',
    )
    expect(() =>
      encryptedParts(xml.replace('m:initialisation-vector="AAAAAAAAAAAAAAAAAAAAAA=="', 'm:initialisation-vector="!!"')),
    ).toThrow(expect.objectContaining({ reason: 'damaged' }))
  })
})
