import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import XLSX from 'xlsx'
import { checkLegacyPassword, rc4 } from './legacy-encryption.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const doc = (name: string) => readFileSync(join(REPO, 'test', 'fixtures', 'documents', name))
const WRONG = { reason: 'wrong_password', message: 'The password given does not open the document.' }

/** A Compound File of the given streams. */
function compound(streams: Record<string, Buffer>): Buffer {
  const cfb = XLSX.CFB.utils.cfb_new()
  for (const [name, content] of Object.entries(streams)) XLSX.CFB.utils.cfb_add(cfb, `/${name}`, content)
  return Buffer.from(XLSX.CFB.write(cfb, { type: 'buffer' }) as Uint8Array)
}

/** A Word File Information Block start whose flags say encrypted, its table in 1Table. */
function fibEncrypted(): Buffer {
  const fib = Buffer.alloc(1024)
  fib.writeUInt16LE(0xa5ec, 0)
  fib.writeUInt16LE(0x0100 | 0x0200, 10)
  return fib
}

/**
 * An RC4 CryptoAPI encryption header (MS-OFFCRYPTO 2.3.5) for `password`, made the way the
 * specification says Office makes one: a random verifier and its SHA-1, encrypted with the key
 * SHA-1(SHA-1(salt + password) + block 0) cut to `keyBits`.
 */
function cryptoApiHeader(password: string, keyBits: number): Buffer {
  const sha1 = (b: Buffer) => createHash('sha1').update(b).digest()
  const salt = randomBytes(16)
  const verifier = randomBytes(16)
  const derived = sha1(Buffer.concat([sha1(Buffer.concat([salt, Buffer.from(password, 'utf16le')])), Buffer.alloc(4)]))
  const key =
    keyBits === 40 ? Buffer.concat([derived.subarray(0, 5), Buffer.alloc(11)]) : derived.subarray(0, keyBits / 8)
  const sealed = rc4(key, Buffer.concat([verifier, sha1(verifier)]))
  const csp = Buffer.from('Microsoft Enhanced Cryptographic Provider v1.0\0', 'utf16le')
  const header = Buffer.alloc(32)
  header.writeUInt32LE(0x04, 0) // fCryptoAPI
  header.writeUInt32LE(0x6801, 8) // RC4
  header.writeUInt32LE(0x8004, 12) // SHA-1
  header.writeUInt32LE(keyBits, 16)
  header.writeUInt32LE(1, 20) // PROV_RSA_FULL
  const info = Buffer.alloc(12)
  info.writeUInt16LE(4, 0) // version 4.2
  info.writeUInt16LE(2, 2)
  info.writeUInt32LE(0x04, 4)
  info.writeUInt32LE(header.length + csp.length, 8)
  const sizes = (n: number) => {
    const b = Buffer.alloc(4)
    b.writeUInt32LE(n)
    return b
  }
  return Buffer.concat([info, header, csp, sizes(16), salt, sealed.subarray(0, 16), sizes(20), sealed.subarray(16)])
}

describe('checkLegacyPassword', () => {
  it.each(['encrypted.doc', 'encrypted.xls'])(
    'passes the password that opens %s (RC4, as LibreOffice writes it) and refuses another',
    (name) => {
      expect(() => checkLegacyPassword(doc(name), 'dutil')).not.toThrow()
      for (const wrong of ['Dutil', 'dutil ', '', 'a much longer password than Office 97 takes'])
        expect(() => checkLegacyPassword(doc(name), wrong)).toThrow(expect.objectContaining(WRONG))
    },
  )

  it.each([40, 128])('checks an RC4 CryptoAPI header of %i-bit keys, as Office 2003 and later write it', (bits) => {
    const file = compound({ WordDocument: fibEncrypted(), '1Table': cryptoApiHeader('s3cret pässword', bits) })
    expect(() => checkLegacyPassword(file, 's3cret pässword')).not.toThrow()
    expect(() => checkLegacyPassword(file, 's3cret password')).toThrow(expect.objectContaining(WRONG))
  })

  it('leaves what it cannot check to LibreOffice: unprotected files, other formats, XOR obfuscation, unknown versions', () => {
    for (const name of ['text.doc', 'sheets.xls', 'slides.ppt', 'text.docx', 'text.odt'])
      expect(() => checkLegacyPassword(doc(name), 'anything')).not.toThrow()
    const obfuscated = fibEncrypted()
    obfuscated.writeUInt16LE(0x0100 | 0x0200 | 0x8000, 10)
    const unknown = Buffer.from([9, 0, 9, 0, ...randomBytes(60)])
    for (const file of [
      compound({ WordDocument: obfuscated, '1Table': cryptoApiHeader('x', 128) }),
      compound({ WordDocument: fibEncrypted(), '1Table': unknown }),
      compound({ WordDocument: fibEncrypted(), '1Table': Buffer.alloc(2) }),
    ])
      expect(() => checkLegacyPassword(file, 'anything')).not.toThrow()
  })

  it('computes RC4 as its published test vectors do', () => {
    expect(rc4(Buffer.from('Key'), Buffer.from('Plaintext')).toString('hex')).toBe('bbf316e8d940af0ad3')
    expect(rc4(Buffer.from('Wiki'), Buffer.from('pedia')).toString('hex')).toBe('1021bf0420')
  })
})
