import { createDecipheriv, createHash } from 'node:crypto'
import { CfbError, readCfbStream } from '../common/cfb-reader.js'

/**
 * A password-protected Word, Excel or PowerPoint file (docx, xlsx, pptx) opened with its
 * password: such a file is a Compound File holding the package encrypted (MS-OFFCRYPTO), which
 * is decrypted here, in memory, before anything else reads it. The decrypted package is then an
 * ordinary document: every check a document gets (its zip, its parts' sizes, what is embedded in
 * it) applies to it before LibreOffice sees it, which LibreOffice opening the encrypted file
 * itself would skip. Agile encryption (what Office 2010 and later write) is read; Office 2007's
 * Standard encryption and any other kind are refused as unsupported.
 */

/** Why a protected document could not be opened. */
export class ProtectedDocumentError extends Error {
  constructor(
    readonly reason: 'wrong_password' | 'unsupported' | 'damaged',
    message: string,
  ) {
    super(message)
    this.name = 'ProtectedDocumentError'
  }
}

/** The most an EncryptionInfo stream holds (its XML descriptor is a few hundred bytes). */
const MAX_INFO_BYTES = 64 * 1024
/** MS-OFFCRYPTO's bound on the password hash's iterations (2.3.4.11): more is no valid file. */
const MAX_SPIN_COUNT = 10_000_000
/** The package is encrypted in segments of this size, each with its own IV (2.3.4.15). */
const SEGMENT = 4096
/** The block keys of an agile password key encryptor (2.3.4.13). */
const VERIFIER_INPUT_BLOCK = Buffer.from('fea7d2763b4b9e79', 'hex')
const VERIFIER_VALUE_BLOCK = Buffer.from('d7aa0f6d3061344e', 'hex')
const KEY_VALUE_BLOCK = Buffer.from('146e0be7abacd0d6', 'hex')
const HASHES: Record<string, string> = {
  SHA1: 'sha1',
  'SHA-1': 'sha1',
  SHA256: 'sha256',
  SHA384: 'sha384',
  SHA512: 'sha512',
}

const damaged = (why: string) => new ProtectedDocumentError('damaged', `The protected document is damaged: ${why}.`)
const unsupported = (what: string) =>
  new ProtectedDocumentError('unsupported', `The document is protected with ${what}, which dutil does not open.`)
/** What a job given a password that opens nothing fails with, whatever the format. */
export const WRONG_PASSWORD = 'The password given does not open the document.'
const wrongPassword = () => new ProtectedDocumentError('wrong_password', WRONG_PASSWORD)

/**
 * The decrypted package (a zip) of a protected docx, xlsx or pptx; null when the file is none (no
 * Compound File holding an encrypted package); or ProtectedDocumentError.
 */
export function decryptOoxml(file: Buffer, password: string): Buffer | null {
  let encrypted: Buffer | null
  try {
    encrypted = readCfbStream(file, 'EncryptedPackage')
  } catch (err) {
    if (err instanceof CfbError) return null
    throw err
  }
  if (!encrypted) return null
  let info: Buffer | null
  try {
    info = readCfbStream(file, 'EncryptionInfo')
  } catch (err) {
    if (err instanceof CfbError) throw damaged('its container cannot be read')
    throw err
  }
  if (!info) throw damaged('it has no encryption information')
  if (info.length < 8 || info.length > MAX_INFO_BYTES) throw damaged('its encryption information is malformed')
  if (encrypted.length < 8) throw damaged('its encrypted package is empty')
  const size = Number(encrypted.readBigUInt64LE(0))
  if (size > encrypted.length - 8) throw damaged('its encrypted package is shorter than it says')
  const major = info.readUInt16LE(0)
  const minor = info.readUInt16LE(2)
  if ((major === 3 || major === 4) && minor === 2) throw unsupported("Office 2007's Standard encryption")
  if (major !== 4 || minor !== 4) throw unsupported(`encryption version ${major}.${minor}`)
  return agile(info.subarray(8).toString('utf8'), encrypted.subarray(8), password).subarray(0, size)
}

/** `bytes` cut or padded (with 0x36, as MS-OFFCRYPTO pads) to `length`. */
function fit(bytes: Buffer, length: number): Buffer {
  if (bytes.length >= length) return bytes.subarray(0, length)
  return Buffer.concat([bytes, Buffer.alloc(length - bytes.length, 0x36)])
}

function hash(algorithm: string, ...parts: Buffer[]): Buffer {
  const h = createHash(algorithm)
  for (const p of parts) h.update(p)
  return h.digest()
}

function aesCbc(key: Buffer, iv: Buffer, data: Buffer): Buffer {
  if (data.length % 16 !== 0) throw damaged('an encrypted block is cut short')
  const decipher = createDecipheriv(`aes-${key.length * 8}-cbc`, key, iv)
  decipher.setAutoPadding(false)
  return Buffer.concat([decipher.update(data), decipher.final()])
}

/** The password's hash after `spinCount` rounds (2.3.4.11). */
function passwordHash(algorithm: string, salt: Buffer, password: string, spinCount: number): Buffer {
  let h = hash(algorithm, salt, Buffer.from(password, 'utf16le'))
  const round = Buffer.alloc(4)
  for (let i = 0; i < spinCount; i++) {
    round.writeUInt32LE(i)
    h = hash(algorithm, round, h)
  }
  return h
}

/** The attributes of the first element named `name` (any namespace prefix) in the descriptor. */
function attributesOf(xml: string, name: string): Record<string, string> | null {
  const tag = new RegExp(`<(?:[\\w.-]+:)?${name}\\b([^>]*)>`).exec(xml)
  if (!tag) return null
  const out: Record<string, string> = {}
  for (const m of tag[1].matchAll(/([\w:.-]+)\s*=\s*"([^"]*)"/g)) out[m[1].replace(/^.*:/, '')] = m[2]
  return out
}

interface CipherParams {
  salt: Buffer
  blockSize: number
  keyBytes: number
  hashAlgorithm: string
}

/** A keyData or encryptedKey element's cipher: AES in CBC mode only, with a known hash. */
function cipherParams(a: Record<string, string>): CipherParams {
  if (a.cipherAlgorithm !== 'AES' || a.cipherChaining !== 'ChainingModeCBC')
    throw unsupported(`${a.cipherAlgorithm ?? 'an unnamed cipher'} (${a.cipherChaining ?? 'no chaining'})`)
  const hashAlgorithm = HASHES[a.hashAlgorithm ?? '']
  if (!hashAlgorithm) throw unsupported(`the hash ${a.hashAlgorithm ?? '(none)'}`)
  const keyBits = Number(a.keyBits)
  const blockSize = Number(a.blockSize)
  if (![128, 192, 256].includes(keyBits) || blockSize !== 16) throw damaged('its cipher parameters are malformed')
  const salt = Buffer.from(a.saltValue ?? '', 'base64')
  if (salt.length < 1 || salt.length > 64) throw damaged('its salt is malformed')
  return { salt, blockSize, keyBytes: keyBits / 8, hashAlgorithm }
}

/** Agile encryption (2.3.4.10–2.3.4.15): the password's key opens the package's secret key. */
function agile(xml: string, body: Buffer, password: string): Buffer {
  const keyData = attributesOf(xml, 'keyData')
  const encryptedKey = attributesOf(xml, 'encryptedKey')
  if (!keyData) throw damaged('its encryption descriptor has no key data')
  if (!encryptedKey) throw unsupported('a certificate instead of a password')
  const data = cipherParams(keyData)
  const key = cipherParams(encryptedKey)
  const spinCount = Number(encryptedKey.spinCount)
  if (!Number.isInteger(spinCount) || spinCount < 0 || spinCount > MAX_SPIN_COUNT)
    throw damaged('its password hash count is out of range')
  const h = passwordHash(key.hashAlgorithm, key.salt, password, spinCount)
  const keyFor = (block: Buffer) => fit(hash(key.hashAlgorithm, h, block), key.keyBytes)
  const iv = fit(key.salt, key.blockSize)
  const field = (name: string) => Buffer.from(encryptedKey[name] ?? '', 'base64')
  const verifierInput = aesCbc(keyFor(VERIFIER_INPUT_BLOCK), iv, field('encryptedVerifierHashInput'))
  const verifierHash = aesCbc(keyFor(VERIFIER_VALUE_BLOCK), iv, field('encryptedVerifierHashValue'))
  const expected = hash(key.hashAlgorithm, verifierInput.subarray(0, key.salt.length))
  if (verifierHash.length < expected.length || !verifierHash.subarray(0, expected.length).equals(expected))
    throw wrongPassword()
  const secret = aesCbc(keyFor(KEY_VALUE_BLOCK), iv, field('encryptedKeyValue')).subarray(0, data.keyBytes)
  if (secret.length !== data.keyBytes) throw damaged('its key is cut short')
  const out = Buffer.alloc(body.length)
  const index = Buffer.alloc(4)
  for (let i = 0, at = 0; at < body.length; i++, at += SEGMENT) {
    index.writeUInt32LE(i)
    const segmentIv = fit(hash(data.hashAlgorithm, data.salt, index), data.blockSize)
    aesCbc(secret, segmentIv, body.subarray(at, at + SEGMENT)).copy(out, at)
  }
  return out
}
