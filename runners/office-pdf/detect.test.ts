import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import XLSX from 'xlsx'
import { fileEntry, writeZip, type RawEntry } from '../../test/support/zip-writer.js'
import { detectOffice, MAX_EXPANDED_BYTES, PASSWORD_NEEDED, PROTECTED_PPT } from './detect.js'

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
    ['text.fodt', 'fodt'],
    ['picture.fodt', 'fodt'],
    ['sheets.fods', 'fods'],
    ['slides.fodp', 'fodp'],
  ])('tells %s by its content: %s', async (name, format) => {
    expect(await detectOffice(doc(name))).toBe(format)
  })

  describe('flat OpenDocument and plain text', () => {
    const flat = (prolog: string, mimetype = 'application/vnd.oasis.opendocument.text') =>
      Buffer.from(
        `${prolog}<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" office:mimetype="${mimetype}"><office:body/></office:document>`,
      )

    it('takes flat OpenDocument after a byte-order mark, the XML declaration and comments; not its parts', async () => {
      expect(await detectOffice(flat('\ufeff<?xml version="1.0"?>\n<!-- made here -->\n'))).toBe('fodt')
      expect(await detectOffice(flat('', 'application/vnd.oasis.opendocument.spreadsheet'))).toBe('fods')
      for (const other of [
        flat('', 'application/vnd.oasis.opendocument.graphics'),
        flat('<?xml version="1.0"?><root/>'),
        Buffer.from('<office:document-content office:mimetype="application/vnd.oasis.opendocument.text"/>'),
      ])
        await expect(detectOffice(other, 'x.fodt')).rejects.toMatchObject({
          code: 'upstream_rejected',
          message: expect.stringMatching(/^The file is not an office document/),
        })
    })

    it('refuses a flat document that declares a DTD (the billion laughs, external entities)', async () => {
      const laughs = '<!DOCTYPE office:document [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;&a;">]>'
      for (const body of [flat(`<?xml version="1.0"?>${laughs}`), Buffer.concat([flat(''), Buffer.from(laughs)])])
        await expect(detectOffice(body)).rejects.toMatchObject({
          code: 'upstream_rejected',
          message: 'The document is refused: its XML declares a DTD (entities), which no OpenDocument file needs.',
        })
    })

    it('takes UTF-8 text only when its name says .txt or .csv, and never what is not text', async () => {
      const text = Buffer.from('Ärger, \u201cquoted\u201d\nline two\n')
      expect(await detectOffice(text, 'notes.TXT')).toBe('txt')
      expect(await detectOffice(text, 'table.csv')).toBe('csv')
      for (const [body, name] of [
        [text, 'notes.pdf'],
        [text, ''],
        [Buffer.from([0x61, 0x00, 0x62]), 'nul.txt'],
        [Buffer.from([0xc3, 0x28]), 'latin.txt'],
        [Buffer.alloc(0), 'empty.txt'],
        [Buffer.from('<html><body>a page</body></html>'), 'page.txt'],
      ] as const)
        await expect(detectOffice(body, name), name).rejects.toMatchObject({ code: 'upstream_rejected' })
    })
  })

  it('refuses a protected OpenDocument file without its password, asking for it (with it, the handler decrypts it first)', async () => {
    await expect(detectOffice(doc('encrypted.odt'))).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The document is protected by a password: send its password as `password`.',
    })
  })

  it.each([
    ['encrypted.doc', 'doc'],
    ['encrypted.xls', 'xls'],
  ])(
    'refuses %s, protected by a password, asking for it; with a password it is a %s for LibreOffice to open',
    async (name, format) => {
      await expect(detectOffice(doc(name))).rejects.toMatchObject({
        code: 'upstream_rejected',
        message: PASSWORD_NEEDED,
      })
      expect(await detectOffice(doc(name), name, true)).toBe(format)
    },
  )

  it('refuses a protected ppt file, with a password or without', async () => {
    const cfb = XLSX.CFB.utils.cfb_new()
    XLSX.CFB.utils.cfb_add(cfb, '/PowerPoint Document', Buffer.alloc(8192, 3))
    XLSX.CFB.utils.cfb_add(cfb, '/EncryptedSummary', Buffer.alloc(512, 5))
    const file = Buffer.from(XLSX.CFB.write(cfb, { type: 'buffer' }) as Uint8Array)
    for (const passwordGiven of [false, true])
      await expect(detectOffice(file, 'deck.ppt', passwordGiven)).rejects.toMatchObject({
        code: 'upstream_rejected',
        message: PROTECTED_PPT,
      })
  })

  it('refuses an OOXML document encrypted with a password (a Compound File holding the encrypted package)', async () => {
    const cfb = XLSX.CFB.utils.cfb_new()
    XLSX.CFB.utils.cfb_add(cfb, '/EncryptionInfo', Buffer.alloc(256, 4))
    XLSX.CFB.utils.cfb_add(cfb, '/EncryptedPackage', Buffer.alloc(8192, 7))
    const file = Buffer.from(XLSX.CFB.write(cfb, { type: 'buffer' }) as Uint8Array)
    await expect(detectOffice(file)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The document is protected by a password: send its password as `password`.',
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

  describe('decompression bombs dressed as documents (refused before LibreOffice reads a part)', () => {
    const docx = (body: RawEntry) =>
      writeZip([
        fileEntry(
          '[Content_Types].xml',
          Buffer.from('<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
        ),
        body,
      ])
    const xml = Buffer.from('<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>')

    it('a part that declares more than the limit', async () => {
      const entry = { ...fileEntry('word/document.xml', xml), uncompressedSize: MAX_EXPANDED_BYTES + 1 }
      await expect(detectOffice(docx(entry))).rejects.toMatchObject({
        code: 'upstream_rejected',
        message: 'The document is refused: its parts expand to more than 1 GiB (a limit against decompression bombs).',
      })
    })

    it('a part that expands more than a thousand times (64 MiB of one byte)', async () => {
      const entry = fileEntry('word/document.xml', Buffer.alloc(64 * 1024 ** 2, 0x20))
      expect(entry.uncompressedSize / entry.stored.length).toBeGreaterThan(1000)
      await expect(detectOffice(docx(entry))).rejects.toMatchObject({
        code: 'upstream_rejected',
        message: expect.stringContaining('its part word/document.xml expands more than 1000 times'),
      })
    })

    it('a part that inflates past the size its directory entry declares', async () => {
      const real = Buffer.concat([xml, Buffer.from(randomBytes(3 * 1024 ** 2).toString('base64'))])
      const entry = { ...fileEntry('word/document.xml', real), uncompressedSize: xml.length }
      await expect(detectOffice(docx(entry))).rejects.toMatchObject({
        code: 'upstream_rejected',
        message: expect.stringContaining('its part word/document.xml expands past the size its zip directory declares'),
      })
      // The same part declared honestly is a document.
      expect(await detectOffice(docx(fileEntry('word/document.xml', real)))).toBe('docx')
    })
  })

  describe('packages nested in a document (embedded objects) are held to the same limits, within its budget', () => {
    const bomb = () =>
      writeZip([
        fileEntry('[Content_Types].xml', Buffer.from('<Types/>')),
        fileEntry('xl/workbook.xml', Buffer.alloc(64 * 1024 ** 2, 0x20)),
      ])
    const docxHolding = (name: string, inner: Buffer) =>
      writeZip([
        fileEntry('[Content_Types].xml', Buffer.from('<Types/>')),
        fileEntry('word/document.xml', Buffer.from('<w:document/>')),
        // Stored as it is: the outer zip's own ratio check sees nothing to refuse.
        fileEntry(name, inner, 0),
      ])

    it('an embedded workbook whose part expands more than a thousand times', async () => {
      await expect(
        detectOffice(docxHolding('word/embeddings/Microsoft_Excel_Worksheet.xlsx', bomb())),
      ).rejects.toMatchObject({
        code: 'upstream_rejected',
        message: expect.stringContaining('its part xl/workbook.xml expands more than 1000 times'),
      })
    })

    it('packages nested more than three deep, and a damaged embedded package', async () => {
      const sheet = writeZip([fileEntry('xl/workbook.xml', Buffer.from('<workbook/>'))])
      let nested = sheet
      for (let i = 0; i < 3; i++) nested = docxHolding(`word/embeddings/level${i}.docx`, nested)
      expect(await detectOffice(nested)).toBe('docx')
      await expect(detectOffice(docxHolding('word/embeddings/level3.docx', nested))).rejects.toMatchObject({
        message: expect.stringContaining('nests embedded packages more than 3 deep'),
      })
      await expect(
        detectOffice(docxHolding('word/embeddings/broken.xlsx', sheet.subarray(0, 40))),
      ).rejects.toMatchObject({
        message: 'The document is refused: a package embedded in it is damaged.',
      })
    })

    it("an OLE object's package in a legacy Word document", async () => {
      const cfb = XLSX.CFB.utils.cfb_new()
      XLSX.CFB.utils.cfb_add(cfb, 'WordDocument', Buffer.alloc(64))
      XLSX.CFB.utils.cfb_add(cfb, 'Package', bomb())
      const file = Buffer.from(XLSX.CFB.write(cfb, { type: 'buffer' }) as Buffer)
      await expect(detectOffice(file)).rejects.toMatchObject({
        message: expect.stringContaining('expands more than 1000 times'),
      })
    })

    it('an RTF object (\\objdata) holding a package', async () => {
      const ole1 = Buffer.concat([Buffer.from([1, 5, 0, 0, 2, 0, 0, 0, 8, 0, 0, 0]), Buffer.from('Package\0'), bomb()])
      const rtf = (data: Buffer) =>
        Buffer.from(
          `{\\rtf1\\ansi {\\object\\objemb{\\*\\objclass Package}{\\*\\objdata ${data.toString('hex').replace(/(.{128})/g, '$1\n')}}}}`,
        )
      await expect(detectOffice(rtf(ole1))).rejects.toMatchObject({
        message: expect.stringContaining('expands more than 1000 times'),
      })
      const harmless = Buffer.concat([ole1.subarray(0, 20), writeZip([fileEntry('a.xml', Buffer.from('<a/>'))])])
      expect(await detectOffice(rtf(harmless))).toBe('rtf')
    })
  })
})
