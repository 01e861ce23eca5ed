import { createHash } from 'node:crypto'
import { CfbError, readCfbStream } from '../common/cfb-reader.js'
import { ProtectedDocumentError, WRONG_PASSWORD } from './ooxml-encryption.js'

/**
 * Whether a password opens a protected Word or Excel 97–2003 file, checked before LibreOffice
 * decrypts it (LibreOffice answers a wrong password and a damaged file alike: it cannot load
 * either). Both formats keep an RC4 encryption header beside the encrypted streams (MS-OFFCRYPTO
 * 2.3.6 RC4, what Office 97–2000 and LibreOffice write; 2.3.5 RC4 CryptoAPI, what Office 2003
 * and later write): a salt, and a random verifier with its hash, both encrypted with the key the
 * password derives. A header of another kind (XOR obfuscation, an unknown version) is left to
 * LibreOffice.
 */

/** Word's File Information Block: fEncrypted, fWhichTblStm and fObfuscated (MS-DOC 2.5.2). */
const F_ENCRYPTED = 0x0100
const F_WHICH_TABLE = 0x0200
const F_OBFUSCATED = 0x8000
/** Excel's FILEPASS record and its RC4 kind (MS-XLS 2.4.117). */
const FILEPASS = 0x002f
const BIFF_EOF = 0x000a
const FILEPASS_RC4 = 0x0001

/**
 * Throws ProtectedDocumentError (`wrong_password`) when `file` is a protected doc or xls file whose
 * RC4 header the password does not open; returns quietly for anything else (not such a file, not
 * protected, a password that opens it, a header this check does not read).
 */
export function checkLegacyPassword(file: Buffer, password: string): void {
  const header = rc4Header(file)
  if (header && !opens(header, password)) throw new ProtectedDocumentError('wrong_password', WRONG_PASSWORD)
}

/** The encryption header of a protected doc or xls file (from its version field on), or null. */
function rc4Header(file: Buffer): Buffer | null {
  try {
    const word = readCfbStream(file, 'WordDocument')
    if (word) {
      if (!wordEncrypted(word)) return null
      const flags = word.readUInt16LE(10)
      if (flags & F_OBFUSCATED) return null
      return readCfbStream(file, flags & F_WHICH_TABLE ? '1Table' : '0Table')
    }
    const book = readCfbStream(file, 'Workbook') ?? readCfbStream(file, 'Book')
    const filePass = book && filePassRecord(book)
    return filePass && filePass.length >= 2 && filePass.readUInt16LE(0) === FILEPASS_RC4 ? filePass.subarray(2) : null
  } catch (err) {
    if (err instanceof CfbError) return null
    throw err
  }
}

/** Whether a Word document's File Information Block says it is encrypted (or obfuscated: MS-DOC 2.5.2 fEncrypted). */
export function wordEncrypted(word: Buffer): boolean {
  return word.length >= 12 && (word.readUInt16LE(10) & F_ENCRYPTED) !== 0
}

/**
 * The body of a BIFF workbook's FILEPASS record (the workbook is encrypted), or null: its globals
 * read record by record up to their EOF, at most 10,000 records.
 */
export function filePassRecord(book: Buffer): Buffer | null {
  let at = 0
  for (let records = 0; records < 10_000 && at + 4 <= book.length; records++) {
    const type = book.readUInt16LE(at)
    const size = book.readUInt16LE(at + 2)
    if (type === BIFF_EOF) return null
    if (type === FILEPASS) return book.subarray(at + 4, at + 4 + size)
    at += 4 + size
  }
  return null
}

/** Whether the password opens the header; true for a header this check does not read. */
function opens(header: Buffer, password: string): boolean {
  if (header.length < 4) return true
  const major = header.readUInt16LE(0)
  const minor = header.readUInt16LE(2)
  const utf16 = Buffer.from(password, 'utf16le')
  if (major === 1 && minor === 1) return opensRc4(header.subarray(4), utf16)
  if (major >= 2 && major <= 4 && minor === 2) return opensCryptoApi(header.subarray(4), utf16)
  return true
}

/** RC4 (MS-OFFCRYPTO 2.3.6.2 and 2.3.6.4): MD5 keys of 128 bits, the salt mixed in 16 times. */
function opensRc4(rest: Buffer, utf16: Buffer): boolean {
  if (rest.length < 48) return true
  const salt = rest.subarray(0, 16)
  const truncated = md5(utf16).subarray(0, 5)
  const mixed = md5(Buffer.concat(Array.from({ length: 16 }, () => Buffer.concat([truncated, salt])))).subarray(0, 5)
  const key = md5(Buffer.concat([mixed, blockNumber(0)]))
  const plain = rc4(key, rest.subarray(16, 48))
  return md5(plain.subarray(0, 16)).equals(plain.subarray(16, 32))
}

/** RC4 CryptoAPI (MS-OFFCRYPTO 2.3.5.2 and 2.3.5.6): SHA-1 keys of 40 to 128 bits. */
function opensCryptoApi(rest: Buffer, utf16: Buffer): boolean {
  if (rest.length < 8) return true
  const headerSize = rest.readUInt32LE(4)
  const header = rest.subarray(8, 8 + headerSize)
  if (header.length < 32) return true
  const keyBits = header.readUInt32LE(16) || 40
  const verifier = rest.subarray(8 + headerSize)
  if (verifier.length < 4) return true
  const saltSize = verifier.readUInt32LE(0)
  if (saltSize !== 16 || verifier.length < 4 + 16 + 16 + 4 + 20 || keyBits % 8 !== 0 || keyBits > 128) return true
  const salt = verifier.subarray(4, 20)
  const hashSize = verifier.readUInt32LE(36)
  if (hashSize !== 20) return true
  const derived = sha1(Buffer.concat([sha1(Buffer.concat([salt, utf16])), blockNumber(0)])).subarray(0, keyBits / 8)
  // A 40-bit key is used as 128 bits, the rest zero (2.3.5.2).
  const key = keyBits === 40 ? Buffer.concat([derived, Buffer.alloc(11)]) : derived
  const plain = rc4(key, Buffer.concat([verifier.subarray(20, 36), verifier.subarray(40, 60)]))
  return sha1(plain.subarray(0, 16)).equals(plain.subarray(16, 36))
}

const md5 = (data: Buffer) => createHash('md5').update(data).digest()
const sha1 = (data: Buffer) => createHash('sha1').update(data).digest()

function blockNumber(n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n)
  return b
}

/** RC4 (OpenSSL 3 keeps it in its legacy provider, which Node does not load). */
export function rc4(key: Buffer, data: Buffer): Buffer {
  const s = new Uint8Array(256)
  for (let i = 0; i < 256; i++) s[i] = i
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 0xff
    ;[s[i], s[j]] = [s[j], s[i]]
  }
  const out = Buffer.alloc(data.length)
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff
    j = (j + s[i]) & 0xff
    ;[s[i], s[j]] = [s[j], s[i]]
    out[n] = data[n] ^ s[(s[i] + s[j]) & 0xff]
  }
  return out
}
