import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import XLSX from 'xlsx'
import { detectOffice } from './detect.js'
import { unprotected } from './handler.js'
import { decryptOoxml, ProtectedDocumentError } from './ooxml-encryption.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const doc = (name: string) => readFileSync(join(REPO, 'test', 'fixtures', 'documents', name))

/** A Compound File with the given root streams (SheetJS's CFB writer: another implementation than the reader's). */
function compound(streams: Record<string, Buffer>): Buffer {
  const cfb = XLSX.CFB.utils.cfb_new()
  for (const [name, body] of Object.entries(streams)) XLSX.CFB.utils.cfb_add(cfb, `/${name}`, body)
  return Buffer.from(XLSX.CFB.write(cfb, { type: 'buffer' }) as Uint8Array)
}

describe('protected docx, xlsx and pptx files (Agile encryption by msoffcrypto-tool, the password "dutil")', () => {
  it.each([
    ['encrypted.docx', 'docx'],
    ['encrypted.xlsx', 'xlsx'],
    ['encrypted.pptx', 'pptx'],
  ] as const)('%s opens with its password into a package the format check reads as %s', async (name, format) => {
    const plain = decryptOoxml(doc(name), 'dutil')
    expect(plain).not.toBeNull()
    expect(plain!.subarray(0, 4).toString('latin1')).toBe('PK\x03\x04')
    expect(await detectOffice(plain!)).toBe(format)
  })

  it('refuses a wrong password, naming it, and the password of another case', () => {
    for (const password of ['wrong', 'Dutil', '']) {
      expect(() => decryptOoxml(doc('encrypted.docx'), password)).toThrow(
        expect.objectContaining({
          reason: 'wrong_password',
          message: 'The password given does not open the document.',
        }),
      )
    }
  })

  it('takes anything else as it came: an unprotected document, a password it does not need', async () => {
    const text = doc('text.docx')
    expect(decryptOoxml(text, 'dutil')).toBeNull()
    expect(await unprotected(text, 'dutil')).toBe(text)
    expect(await unprotected(doc('encrypted.docx'), undefined)).toEqual(doc('encrypted.docx'))
    await expect(unprotected(doc('encrypted.docx'), 'nope')).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The password given does not open the document.',
    })
  })

  it('refuses crafted encryption information as damaged or unsupported, never a crash or a long hash', () => {
    const agile = (xml: string) =>
      compound({
        EncryptionInfo: Buffer.concat([Buffer.from([4, 0, 4, 0, 0x40, 0, 0, 0]), Buffer.from(xml)]),
        EncryptedPackage: Buffer.concat([Buffer.from([16, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(16)]),
      })
    const keyData =
      '<keyData saltSize="16" blockSize="16" keyBits="256" hashSize="64" cipherAlgorithm="AES" cipherChaining="ChainingModeCBC" hashAlgorithm="SHA512" saltValue="AAAAAAAAAAAAAAAAAAAAAA=="/>'
    const key = (attrs: string) =>
      `<p:encryptedKey saltSize="16" blockSize="16" keyBits="256" hashSize="64" cipherAlgorithm="AES" cipherChaining="ChainingModeCBC" hashAlgorithm="SHA512" saltValue="AAAAAAAAAAAAAAAAAAAAAA==" ${attrs}/>`
    const reason = (file: Buffer) => {
      try {
        decryptOoxml(file, 'dutil')
      } catch (err) {
        return err instanceof ProtectedDocumentError ? err.reason : String(err)
      }
      return 'opened'
    }
    expect(reason(agile(`<encryption>${keyData}${key('spinCount="4000000000"')}</encryption>`))).toBe('damaged')
    expect(reason(agile(`<encryption>${keyData}</encryption>`))).toBe('unsupported')
    expect(reason(agile(`<encryption>${keyData.replace('AES', 'RC2')}${key('spinCount="1"')}</encryption>`))).toBe(
      'unsupported',
    )
    expect(
      reason(
        agile(
          `<encryption>${keyData}${key('spinCount="1" encryptedVerifierHashInput="AAAA" encryptedVerifierHashValue="" encryptedKeyValue=""')}</encryption>`,
        ),
      ),
    ).toBe('damaged')
    // A package that says it is larger than it is; an unknown version; no encryption information.
    const long = compound({
      EncryptionInfo: Buffer.from([4, 0, 4, 0, 0x40, 0, 0, 0]),
      EncryptedPackage: Buffer.concat([Buffer.from([0, 0, 0, 1, 0, 0, 0, 0]), Buffer.alloc(16)]),
    })
    expect(reason(long)).toBe('damaged')
    const standard = compound({
      EncryptionInfo: Buffer.concat([Buffer.from([3, 0, 2, 0, 0x24, 0, 0, 0]), Buffer.alloc(200)]),
      EncryptedPackage: Buffer.concat([Buffer.from([16, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(16)]),
    })
    expect(reason(standard)).toBe('unsupported')
    const rc4 = compound({
      EncryptionInfo: Buffer.from([1, 0, 1, 0, 0, 0, 0, 0]),
      EncryptedPackage: Buffer.concat([Buffer.from([16, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(16)]),
    })
    expect(reason(rc4)).toBe('unsupported')
    expect(reason(compound({ EncryptedPackage: Buffer.alloc(24) }))).toBe('damaged')
  })
})
