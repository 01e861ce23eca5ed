import { createDecipheriv, createHash, pbkdf2 } from 'node:crypto'
import { promisify } from 'node:util'
import { inflateRawSync } from 'node:zlib'
import yauzl from 'yauzl'
import { zipArchive } from '../../platform/zip-writer.js'
import { MAX_ZIP_ENTRIES } from './detect.js'
import { ProtectedDocumentError, WRONG_PASSWORD } from './ooxml-encryption.js'

/**
 * A password-protected OpenDocument file (odt, ods, odp, and their templates) opened with its
 * password. Such a file is an ordinary zip whose parts are each deflated, then encrypted; its
 * manifest says how (ODF 1.2 part 3, 3.8.2): a start key hashed from the password, a key derived
 * from it per part (PBKDF2 with the part's salt), the part encrypted with it (AES-256-CBC, what
 * LibreOffice writes since 3.4) and a checksum of the part's first 1024 bytes that tells a wrong
 * password. The parts are decrypted and inflated here, in memory, within bounds, and written
 * into a plain OpenDocument zip with a manifest that says nothing of encryption: every check a
 * document gets then applies to what is inside before LibreOffice sees it, as for a protected
 * docx (ooxml-encryption.ts). Blowfish (OpenOffice.org 2) and AES-GCM with Argon2 (LibreOffice
 * 7.6's "wholesome" encryption) are refused as unsupported.
 */

/** The manifest is read whole (a document's is a few KB per part). */
const MAX_MANIFEST_BYTES = 1024 * 1024
/** PBKDF2 rounds of all the parts together: LibreOffice uses 100,000 a part; a file asking far more costs the runner's CPU for nothing. */
const MAX_TOTAL_ITERATIONS = 20_000_000
/**
 * What the document's parts may take in memory, in all, as read and once decrypted and inflated
 * (they are held together to be written into the plain zip): more than a document of office-pdf's
 * 100 MB holds unless its text compresses past what LibreOffice would load in the pod anyway.
 */
export const MAX_HELD_BYTES = 256 * 1024 ** 2

const AES_CBC: Record<string, string> = {
  'http://www.w3.org/2001/04/xmlenc#aes256-cbc': 'aes-256-cbc',
  'http://www.w3.org/2001/04/xmlenc#aes192-cbc': 'aes-192-cbc',
  'http://www.w3.org/2001/04/xmlenc#aes128-cbc': 'aes-128-cbc',
}
const START_KEY: Record<string, string> = {
  'http://www.w3.org/2000/09/xmldsig#sha256': 'sha256',
  'http://www.w3.org/2001/04/xmlenc#sha256': 'sha256',
  SHA1: 'sha1',
  'http://www.w3.org/2000/09/xmldsig#sha1': 'sha1',
}
const CHECKSUM: Record<string, string> = {
  'urn:oasis:names:tc:opendocument:xmlns:manifest:1.0#sha256-1k': 'sha256',
  'urn:oasis:names:tc:opendocument:xmlns:manifest:1.0#sha1-1k': 'sha1',
  'SHA1/1K': 'sha1',
}

const damaged = (why: string) => new ProtectedDocumentError('damaged', `The protected document is damaged: ${why}.`)
const unsupported = (what: string) =>
  new ProtectedDocumentError('unsupported', `The document is protected with ${what}, which dutil does not open.`)

/** How one part is encrypted, as its manifest entry says. */
export interface PartEncryption {
  path: string
  /** Its size once inflated, when the manifest says. */
  size?: number
  cipher: string
  iv: Buffer
  startKey: string
  keySize: number
  iterations: number
  salt: Buffer
  checksumHash: string
  checksum: Buffer
}

const attributesOf = (tag: string): Map<string, string> => {
  const out = new Map<string, string>()
  for (const m of tag.matchAll(/([\w.-]+:)?([\w.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g))
    out.set(
      m[2],
      (m[3] ?? m[4])
        .replace(/&amp;/g, '&')
        .replace(/&quot;/g, '"')
        .replace(/&apos;/g, "'"),
    )
  return out
}

/**
 * The encrypted parts a manifest lists (pure), or the reason it cannot be read. Unknown
 * algorithms are refused as unsupported; malformed values as damage.
 */
export function encryptedParts(manifest: string): PartEncryption[] {
  const parts: PartEncryption[] = []
  for (const entry of manifest.matchAll(
    /<(?:[\w.-]+:)?file-entry\b([^>]*?)(?:\/>|>([\s\S]*?)<\/(?:[\w.-]+:)?file-entry\s*>)/g,
  )) {
    const body = entry[2]
    if (!body || !/encryption-data\b/.test(body)) continue
    const tag = (name: string) => {
      const m = new RegExp(`<(?:[\\w.-]+:)?${name}\\b([^>]*)>`).exec(body)
      return m ? attributesOf(m[1]) : undefined
    }
    const file = attributesOf(entry[1])
    const data = tag('encryption-data')
    const algorithm = tag('algorithm')
    const derivation = tag('key-derivation')
    const start = tag('start-key-generation')
    const path = file.get('full-path')
    if (!path || !data || !algorithm || !derivation)
      throw damaged('its manifest describes an encrypted part incompletely')
    const algorithmName = algorithm.get('algorithm-name') ?? ''
    const cipher = AES_CBC[algorithmName]
    if (!cipher)
      throw unsupported(
        /blowfish/i.test(algorithmName)
          ? "OpenOffice.org's old Blowfish encryption"
          : `the cipher ${algorithmName.slice(0, 80)}`,
      )
    if (derivation.get('key-derivation-name') !== 'PBKDF2')
      throw unsupported(`the key derivation ${(derivation.get('key-derivation-name') ?? '').slice(0, 80)}`)
    const startKey = START_KEY[start?.get('start-key-generation-name') ?? 'SHA1']
    if (!startKey) throw unsupported(`the start key ${(start?.get('start-key-generation-name') ?? '').slice(0, 80)}`)
    const checksumHash = CHECKSUM[data.get('checksum-type') ?? 'SHA1/1K']
    if (!checksumHash) throw unsupported(`the checksum ${(data.get('checksum-type') ?? '').slice(0, 80)}`)
    const number = (value: string | undefined, fallback?: number) => {
      if (value === undefined && fallback !== undefined) return fallback
      if (value === undefined || !/^\d{1,10}$/.test(value)) throw damaged('its manifest holds a malformed number')
      return Number(value)
    }
    const bytes = (value: string | undefined) => {
      if (value === undefined || !/^[A-Za-z0-9+/]*={0,2}$/.test(value))
        throw damaged('its manifest holds a malformed value')
      return Buffer.from(value, 'base64')
    }
    const iv = bytes(algorithm.get('initialisation-vector'))
    if (iv.length !== 16) throw damaged('an encrypted part has a malformed initialisation vector')
    const keySize = number(derivation.get('key-size'), 16)
    if (keySize !== Number(cipher.slice(4, 7)) / 8)
      throw damaged("an encrypted part's key size does not fit its cipher")
    const size = file.get('size')
    parts.push({
      path: path.replace(/^\//, ''),
      ...(size !== undefined ? { size: number(size) } : {}),
      cipher,
      iv,
      startKey,
      keySize,
      iterations: number(derivation.get('iteration-count')),
      salt: bytes(derivation.get('salt')),
      checksumHash,
      checksum: bytes(data.get('checksum')),
    })
  }
  return parts
}

/** The manifest without its encryption data: what a plain document's says. */
export function plainManifest(manifest: string): string {
  return manifest.replace(/<(?:[\w.-]+:)?encryption-data\b[\s\S]*?<\/(?:[\w.-]+:)?encryption-data\s*>/g, '')
}

/** A part's bytes decrypted with the key derived for it; null when its checksum says the password is wrong. */
export function decryptPart(part: PartEncryption, key: Buffer, data: Buffer): Buffer | null {
  if (data.length === 0 || data.length % 16 !== 0) throw damaged(`its part ${part.path} is not whole`)
  const decipher = createDecipheriv(part.cipher, key, part.iv)
  // XML Encryption's padding (ISO 10126): the last byte counts the padding, the rest is arbitrary.
  decipher.setAutoPadding(false)
  const padded = Buffer.concat([decipher.update(data), decipher.final()])
  const pad = padded[padded.length - 1]
  const plain = pad >= 1 && pad <= 16 ? padded.subarray(0, padded.length - pad) : padded
  const sum = createHash(part.checksumHash).update(plain.subarray(0, 1024)).digest()
  return sum.equals(part.checksum) ? plain : null
}

interface ZipPart {
  name: string
  data: Buffer
}

/** Every entry of the zip, read whole (the document is within its size limit, in memory already). */
async function readEntries(file: Buffer, maxHeld: number): Promise<ZipPart[] | null> {
  let zip: yauzl.ZipFile
  try {
    zip = await promisify<Buffer, yauzl.Options, yauzl.ZipFile>(yauzl.fromBuffer)(file, {
      lazyEntries: true,
      validateEntrySizes: true,
    })
  } catch {
    return null
  }
  if (zip.entryCount > MAX_ZIP_ENTRIES) {
    zip.close()
    return null
  }
  return new Promise((resolve, reject) => {
    const parts: ZipPart[] = []
    let total = 0
    const fail = () => {
      zip.close()
      reject(damaged('its zip container cannot be read'))
    }
    zip.on('entry', (e: yauzl.Entry) => {
      if (e.fileName.endsWith('/')) return zip.readEntry()
      total += e.uncompressedSize
      if (total > maxHeld) {
        zip.close()
        return reject(damaged(`its parts take more than ${maxHeld / 1024 ** 2} MB`))
      }
      zip.openReadStream(e, (err, s) => {
        if (err || !s) return fail()
        const chunks: Buffer[] = []
        s.on('data', (c: Buffer) => chunks.push(c))
        s.on('end', () => {
          parts.push({ name: e.fileName, data: Buffer.concat(chunks) })
          zip.readEntry()
        })
        s.on('error', fail)
      })
    })
    zip.on('end', () => resolve(parts))
    zip.on('error', fail)
    zip.readEntry()
  })
}

/**
 * The plain OpenDocument zip of a protected one, opened with `password`; null when the file is
 * no OpenDocument zip with encrypted parts; or ProtectedDocumentError (a wrong password, a kind
 * of encryption dutil does not open, damage).
 */
export async function decryptOdf(
  file: Buffer,
  password: string,
  maxHeld: number = MAX_HELD_BYTES,
): Promise<Buffer | null> {
  if (file.length < 38 || file.toString('latin1', 30, 38) !== 'mimetype') return null
  const entries = await readEntries(file, maxHeld)
  const manifestEntry = entries?.find((e) => e.name === 'META-INF/manifest.xml')
  if (!entries || !manifestEntry || manifestEntry.data.length > MAX_MANIFEST_BYTES) return null
  const manifest = manifestEntry.data.toString('utf8')
  if (!manifest.includes('encryption-data')) return null
  const parts = encryptedParts(manifest)
  if (parts.reduce((sum, p) => sum + p.iterations, 0) > MAX_TOTAL_ITERATIONS)
    throw unsupported('a key derivation far costlier than LibreOffice writes')
  const byPath = new Map(parts.map((p) => [p.path, p]))
  const derive = promisify(pbkdf2)
  const startKeys = new Map<string, Buffer>()
  // What is held: every part as read, then each decrypted part inflated beside them.
  let held = entries.reduce((sum, e) => sum + e.data.length, 0)
  const plain: ZipPart[] = []
  for (const entry of entries) {
    const part = byPath.get(entry.name)
    if (entry.name === 'META-INF/manifest.xml') {
      plain.push({ name: entry.name, data: Buffer.from(plainManifest(manifest)) })
      continue
    }
    if (!part) {
      plain.push(entry)
      continue
    }
    let start = startKeys.get(part.startKey)
    if (!start) startKeys.set(part.startKey, (start = createHash(part.startKey).update(password, 'utf8').digest()))
    const key = await derive(start, part.salt, part.iterations, part.keySize, 'sha1')
    const deflated = decryptPart(part, key, entry.data)
    if (!deflated) throw new ProtectedDocumentError('wrong_password', WRONG_PASSWORD)
    const room = maxHeld - held
    if (room <= 0) throw damaged(`its parts take more than ${maxHeld / 1024 ** 2} MB`)
    let data: Buffer
    try {
      data = inflateRawSync(deflated, { maxOutputLength: Math.min(room, part.size ?? room) })
    } catch {
      throw damaged(
        `its part ${entry.name} does not inflate to what its manifest says, within ${maxHeld / 1024 ** 2} MB in all`,
      )
    }
    held += data.length
    plain.push({ name: entry.name, data })
  }
  for (const path of byPath.keys())
    if (!entries.some((e) => e.name === path)) throw damaged(`its manifest lists ${path}, which it lacks`)
  // The mimetype first and stored, as OpenDocument asks; the rest deflated.
  plain.sort((a, b) => Number(b.name === 'mimetype') - Number(a.name === 'mimetype'))
  const now = new Date()
  const out: Buffer[] = []
  const archive = zipArchive(
    plain.map((p) => ({
      name: p.name,
      date: now,
      store: p.name === 'mimetype',
      data: (async function* () {
        yield p.data
      })(),
    })),
    { level: 6 },
  )
  for await (const chunk of archive) out.push(Buffer.from(chunk))
  return Buffer.concat(out)
}
