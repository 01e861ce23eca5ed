import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import XLSX from 'xlsx'
import { detectOffice } from './detect.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const doc = (name: string) => readFileSync(join(REPO, 'test', 'fixtures', 'documents', name))
const hostile = (name: string) => readFileSync(join(REPO, 'test', 'fixtures', 'hostile', name))

describe('detectOffice', () => {
  it.each([
    ['text.docx', 'docx'],
    ['three-pages.docx', 'docx'],
    ['text.doc', 'doc'],
    ['text.odt', 'odt'],
    ['text.rtf', 'rtf'],
    ['sheets.xlsx', 'xlsx'],
    ['sheets.xls', 'xls'],
    ['sheets.ods', 'ods'],
    ['slides.pptx', 'pptx'],
    ['slides.ppt', 'ppt'],
    ['slides.odp', 'odp'],
  ])('tells %s by its content: %s', async (name, format) => {
    expect(await detectOffice(doc(name))).toBe(format)
  })

  it.each(['encrypted.odt', 'encrypted.doc', 'encrypted.xls'])(
    'refuses %s, protected by a password, as upstream_rejected',
    async (name) => {
      await expect(detectOffice(doc(name))).rejects.toMatchObject({
        code: 'upstream_rejected',
        message: 'The document is protected by a password; dutil converts only documents without one.',
      })
    },
  )

  it('refuses an OOXML document encrypted with a password (a Compound File holding the encrypted package)', async () => {
    const cfb = XLSX.CFB.utils.cfb_new()
    XLSX.CFB.utils.cfb_add(cfb, '/EncryptionInfo', Buffer.alloc(256, 4))
    XLSX.CFB.utils.cfb_add(cfb, '/EncryptedPackage', Buffer.alloc(8192, 7))
    const file = Buffer.from(XLSX.CFB.write(cfb, { type: 'buffer' }) as Uint8Array)
    await expect(detectOffice(file)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringContaining('protected by a password'),
    })
  })

  it('refuses what is no office document, whatever its name says', async () => {
    for (const body of [
      hostile('not-a-pdf.pdf'),
      hostile('nested.zip'),
      hostile('encrypted.pdf'),
      Buffer.from('<html><body>hello</body></html>'),
      Buffer.alloc(0),
      // A Compound File with no document stream, and a broken one.
      Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(600)]),
    ])
      await expect(detectOffice(body)).rejects.toMatchObject({
        code: 'upstream_rejected',
        message: expect.stringMatching(/^The file is not an office document this utility converts \(docx, doc, odt/),
      })
  })
})
