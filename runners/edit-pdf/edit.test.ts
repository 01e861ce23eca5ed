import { describe, expect, it } from 'vitest'
import { documentInfoOf, infoExtras, pdfFactsOf } from '../common/pdf-facts.js'
import { encryptArgs, infoUpdate, pdfDate, qpdfArgs, qpdfRanges, rewrittenInfoUpdate } from './edit.js'
import { checkEditPdf } from './utility.js'

const files = { input: '/s/input.pdf', output: '/s/output.pdf' }

describe('qpdfArgs', () => {
  it('applies every edit asked for in one run, pages written as qpdf ranges', () => {
    expect(
      qpdfArgs(
        {
          url: 'u',
          flatten: true,
          rotate: { angle: 90, pages: '4-, 1' },
          stamp: { text: 'DRAFT', layer: 'under', pages: '2-3' },
          compress: true,
          linearize: true,
        },
        6,
        { ...files, stamp: '/s/stamp.pdf', infoUpdate: '/s/info.json' },
      ),
    ).toEqual([
      '--warning-exit-0',
      '/s/input.pdf',
      '--update-from-json=/s/info.json',
      '--generate-appearances',
      '--flatten-annotations=all',
      '--rotate=+90:1,4-6',
      '--underlay',
      '/s/stamp.pdf',
      '--to=2-3',
      '--from=1',
      '--repeat=1',
      '--',
      '--object-streams=generate',
      '--compress-streams=y',
      '--recompress-flate',
      '--compression-level=9',
      '--linearize',
      '/s/output.pdf',
    ])
  })

  it('stamps every page over its content by default, and refuses pages past the end', () => {
    const args = qpdfArgs({ url: 'u', stamp: { text: 'PAID' } }, 3, { ...files, stamp: '/s/stamp.pdf' })
    expect(args.slice(2, 4)).toEqual(['--overlay', '/s/stamp.pdf'])
    expect(args).toContain('--to=1-3')
    expect(() => qpdfArgs({ url: 'u', rotate: { angle: 180, pages: '2-4' } }, 3, files)).toThrow(
      /has 3 pages; the pages asked for \(2-4\) go past its end/,
    )
  })

  it('embeds each file under its name, replacing one of the same name, before the output is compressed', () => {
    const attachments = [
      { path: '/s/attachment-0', name: 'invoice.xml', description: 'ZUGFeRD data' },
      { path: '/s/attachment-1', name: '--output.pdf' },
    ]
    const args = qpdfArgs({ url: 'u', compress: true, attachments: [{ url: 'a' }, { url: 'b' }] }, 1, {
      ...files,
      attachments,
    })
    const at = args.indexOf('--add-attachment')
    expect(args.slice(at, at + 13)).toEqual([
      '--add-attachment',
      '/s/attachment-0',
      '--key=invoice.xml',
      '--filename=invoice.xml',
      '--description=ZUGFeRD data',
      '--replace',
      '--',
      '--add-attachment',
      '/s/attachment-1',
      // A name that looks like an option stays the value of its own option.
      '--key=--output.pdf',
      '--filename=--output.pdf',
      '--replace',
      '--',
    ])
    expect(args.indexOf('--object-streams=generate')).toBeGreaterThan(at)
    expect(args.at(-1)).toBe(files.output)
    expect(
      checkEditPdf({
        url: 'u',
        attachments: [
          { url: 'a', name: 'x' },
          { url: 'b', name: 'x' },
        ],
      }),
    ).toEqual([{ path: 'attachments', message: 'names one file twice' }])
    expect(checkEditPdf({ url: 'u', attachments: [{ url: 'a' }] })).toEqual([])
  })

  it('opens a protected PDF with its password file, and removes the protection unless it protects anew', () => {
    const opened = { ...files, passwordFile: '/s/password' }
    expect(qpdfArgs({ url: 'u', password: 'p' }, 2, opened)).toEqual([
      '--warning-exit-0',
      '--password-file=/s/password',
      '/s/input.pdf',
      '--decrypt',
      '/s/output.pdf',
    ])
    const args = qpdfArgs({ url: 'u', password: 'p', linearize: true }, 2, {
      ...opened,
      encryptArgs: '/s/encrypt.args',
    })
    expect(args.slice(-3)).toEqual(['--linearize', '@/s/encrypt.args', '/s/output.pdf'])
    expect(args).not.toContain('--decrypt')
    // The passwords themselves are never among the arguments.
    expect(args.join(' ')).not.toMatch(/\bp\b/)
  })

  it('encrypts with AES-256, the owner password the user one when absent, everything allowed by default', () => {
    expect(encryptArgs({ userPassword: 'open me' })).toEqual([
      '--encrypt',
      'open me',
      'open me',
      '256',
      '--print=full',
      '--modify=all',
      '--extract=y',
      '--',
    ])
    expect(encryptArgs({ ownerPassword: 'boss', print: 'low', modify: 'none', copy: false })).toEqual([
      '--encrypt',
      '',
      'boss',
      '256',
      '--print=low',
      '--modify=none',
      '--extract=n',
      '--',
    ])
  })

  it('writes pages as ascending runs', () => {
    expect(qpdfRanges([5, 1, 2, 3, 3, 9, 8])).toBe('1-3,5,8-9')
    expect(qpdfRanges([7])).toBe('7')
  })
})

describe('checkEditPdf and passwords', () => {
  it('takes a password alone (removing the protection), and refuses an encryption without a password', () => {
    expect(checkEditPdf({ url: 'u', password: 'p' })).toEqual([])
    expect(checkEditPdf({ url: 'u', encrypt: { userPassword: '' } })).toEqual([
      { path: 'encrypt', message: 'needs a userPassword, an ownerPassword or both' },
    ])
    expect(checkEditPdf({ url: 'u', encrypt: { ownerPassword: 'x' } })).toEqual([])
  })

  it('refuses a password longer than a PDF holds (127 bytes of UTF-8)', () => {
    expect(checkEditPdf({ url: 'u', password: 'é'.repeat(64) })).toEqual([
      { path: 'password', message: 'is longer than 127 bytes in UTF-8, the most a PDF password holds' },
    ])
    expect(checkEditPdf({ url: 'u', encrypt: { userPassword: 'a'.repeat(127) } })).toEqual([])
  })
})

describe('document information', () => {
  const trailer = { '/Root': '2 0 R', '/Size': 27, '/Type': '/XRef', '/W': [1, 2, 2] }
  const now = new Date('2026-11-29T10:15:00.000Z')

  it('replaces the fields given in the Info dictionary the document has, keeping the others', () => {
    const update = infoUpdate(
      { trailer: { ...trailer, '/Info': '3 0 R' }, maxObjectId: 26 },
      { '/Title': 'u:Old', '/Creator': 'u:Writer', '/CreationDate': 'u:D:20200101000000Z' },
      { title: 'New – ü', keywords: ['a', 'b c'] },
      now,
    ) as { qpdf: [unknown, Record<string, unknown>] }
    expect(update.qpdf[1]).toEqual({
      'obj:3 0 R': {
        value: {
          '/Title': 'u:New – ü',
          '/Creator': 'u:Writer',
          '/CreationDate': 'u:D:20200101000000Z',
          '/Keywords': 'u:a, b c',
          '/ModDate': 'u:D:20261129101500Z',
        },
      },
    })
  })

  it('gives a document without an Info dictionary a new one, named by its trailer with its other keys kept', () => {
    const update = infoUpdate({ trailer, maxObjectId: 26 }, undefined, { author: 'Ada' }, now) as {
      qpdf: [{ maxobjectid: number }, Record<string, unknown>]
    }
    expect(update.qpdf[0].maxobjectid).toBe(26)
    expect(update.qpdf[1]).toEqual({
      'obj:27 0 R': { value: { '/Author': 'u:Ada', '/ModDate': 'u:D:20261129101500Z' } },
      trailer: { value: { ...trailer, '/Info': '27 0 R' } },
    })
  })

  it('reads text fields only, keywords split on commas and semicolons, for the result', () => {
    const info = documentInfoOf({
      '/Title': 'u:Report',
      '/Author': 'b:feff0041',
      '/Keywords': 'u:one; two,three ,',
      '/Producer': 'u:',
    })
    expect(info).toEqual({ title: 'Report', keywords: ['one', 'two', 'three'] })
    expect(infoExtras({ ...info, subject: 'x'.repeat(2000) })).toEqual({
      title: 'Report',
      keywords: 'one, two, three',
      subject: 'x'.repeat(1000),
    })
    expect(pdfDate(now)).toBe('D:20261129101500Z')
  })
})

describe('pdfFactsOf', () => {
  it("takes the page count, encryption and trailer from qpdf's description", () => {
    expect(
      pdfFactsOf(
        {
          encrypt: { encrypted: false },
          qpdf: [{ maxobjectid: 9 }, { trailer: { value: { '/Root': '1 0 R' } } }],
        },
        '2\n',
      ),
    ).toEqual({
      pageCount: 2,
      encrypted: false,
      ownerPasswordMatched: false,
      trailer: { '/Root': '1 0 R' },
      maxObjectId: 9,
    })
    // Opened with the password that lifts its permissions (or with none, when it has none that opens it).
    const facts = (ownerpasswordmatched: boolean) =>
      pdfFactsOf(
        {
          encrypt: { encrypted: true, ownerpasswordmatched, userpasswordmatched: !ownerpasswordmatched },
          qpdf: [{ maxobjectid: 9 }, { trailer: { value: {} } }],
        },
        '1',
      )
    expect(facts(true)).toMatchObject({ encrypted: true, ownerPasswordMatched: true })
    expect(facts(false)).toMatchObject({ encrypted: true, ownerPasswordMatched: false })
    expect(() => pdfFactsOf({ qpdf: [{ maxobjectid: 9 }, { trailer: { value: {} } }] }, 'x')).toThrow(
      expect.objectContaining({ code: 'upstream_rejected', message: expect.stringMatching(/without its page count/) }),
    )
  })
})

describe('checkEditPdf', () => {
  it('wants at least one edit, and a stamp text Helvetica can draw', () => {
    expect(checkEditPdf({ url: 'u' })).toEqual([{ path: '', message: expect.stringMatching(/names no edit/) }])
    expect(checkEditPdf({ url: 'u', flatten: false })).toHaveLength(1)
    expect(checkEditPdf({ url: 'u', linearize: true })).toEqual([])
    expect(checkEditPdf({ url: 'u', stamp: { text: 'Entwurf – vertraulich €' } })).toEqual([])
    expect(checkEditPdf({ url: 'u', stamp: { text: '草稿' } })).toEqual([
      { path: 'stamp.text', message: expect.stringMatching(/Windows-1252/) },
    ])
    expect(checkEditPdf({ url: 'u', stamp: { text: 'two\nlines' } })).toHaveLength(1)
  })
})

describe('qpdfReason', () => {
  it("gives qpdf's fatal line without its warnings or the scratch file's name", async () => {
    const { qpdfReason } = await import('../common/qpdf.js')
    expect(
      qpdfReason(
        "WARNING: /tmp/edit-x/input.pdf: file is damaged\nWARNING: /tmp/edit-x/input.pdf: can't find startxref\nqpdf: /tmp/edit-x/input.pdf: unable to find trailer dictionary while recovering damaged file\n",
      ),
    ).toBe('unable to find trailer dictionary while recovering damaged file')
    expect(qpdfReason('')).toBe('no reason given')
  })
})

describe('qpdf around a Ghostscript rewrite', () => {
  const input = {
    url: 'u',
    flatten: true,
    pdfa: 'PDF/A-1b' as const,
    info: { title: 'T' },
    compress: true,
    linearize: true,
  }
  it('edits the pages before it (lifting a protection) and the file after it', () => {
    const before = qpdfArgs(
      input,
      2,
      { ...files, passwordFile: '/s/password', removeAttachments: ['note.txt'] },
      'before',
    )
    expect(before).toEqual([
      '--warning-exit-0',
      '--password-file=/s/password',
      '/s/input.pdf',
      '--generate-appearances',
      '--flatten-annotations=all',
      '--remove-attachment=note.txt',
      '--decrypt',
      '/s/output.pdf',
    ])
    const after = qpdfArgs(input, 2, { ...files, infoUpdate: '/s/u.json', encryptArgs: '/s/e.args' }, 'after')
    expect(after).toEqual([
      '--warning-exit-0',
      '/s/input.pdf',
      '--update-from-json=/s/u.json',
      // PDF/A: a line end before each endstream; PDF/A-1 is PDF 1.4, without object streams.
      '--newline-before-endstream',
      '--object-streams=disable',
      '--compress-streams=y',
      '--recompress-flate',
      '--compression-level=9',
      '--linearize',
      '@/s/e.args',
      '/s/output.pdf',
    ])
    expect(qpdfArgs({ ...input, pdfa: 'PDF/A-2b' }, 2, files, 'after')).toContain('--object-streams=generate')
  })
})

describe('rewrittenInfoUpdate', () => {
  const trailer = { '/Root': '1 0 R', '/Info': '7 0 R', '/Size': 9 }
  const now = new Date('2026-11-30T10:15:00Z')
  it('writes the information whole, the creation date kept, and the same in the XMP of a PDF/A document', () => {
    const { update, xmp } = rewrittenInfoUpdate(
      { trailer, maxObjectId: 8 },
      {
        info: { title: 'Отчёт & <co>', author: 'Ada', keywords: ['a', 'b'] },
        created: "D:20250102030405+01'00'",
        now,
        pdfa: {
          level: 'PDF/A-2b',
          catalog: { ref: '1 0 R', value: { '/Type': '/Catalog', '/Metadata': '5 0 R' } },
          xmpFile: 'm.xmp',
        },
      },
    )
    expect(update).toEqual({
      qpdf: [
        expect.objectContaining({ maxobjectid: 8 }),
        {
          'obj:7 0 R': {
            value: {
              '/Title': 'u:Отчёт & <co>',
              '/Author': 'u:Ada',
              '/Keywords': 'u:a, b',
              '/CreationDate': "u:D:20250102030405+01'00'",
              '/ModDate': 'u:D:20261130101500Z',
            },
          },
          'obj:5 0 R': { stream: { dict: { '/Type': '/Metadata', '/Subtype': '/XML' }, datafile: 'm.xmp' } },
        },
      ],
    })
    expect(xmp).toContain('<rdf:li xml:lang="x-default">Отчёт &amp; &lt;co&gt;</rdf:li>')
    expect(xmp).toContain('<dc:creator><rdf:Seq><rdf:li>Ada</rdf:li></rdf:Seq></dc:creator>')
    expect(xmp).toContain('<pdf:Keywords>a, b</pdf:Keywords>')
    expect(xmp).toContain('<xmp:CreateDate>2025-01-02T03:04:05+01:00</xmp:CreateDate>')
    expect(xmp).toContain('<xmp:ModifyDate>2026-11-30T10:15:00Z</xmp:ModifyDate>')
    expect(xmp).toContain('<pdfaid:part>2</pdfaid:part>')
    expect(xmp).not.toContain('dc:description')
  })
  it('makes the Info dictionary and the metadata stream a document lacks, numbered after its highest object', () => {
    const { update } = rewrittenInfoUpdate(
      { trailer: { '/Root': '1 0 R', '/Size': 9 }, maxObjectId: 8 },
      {
        info: {},
        created: 'not a date',
        now,
        pdfa: { level: 'PDF/A-3b', catalog: { ref: '1 0 R', value: { '/Type': '/Catalog' } }, xmpFile: 'm.xmp' },
      },
    )
    const objects = (update as { qpdf: [unknown, Record<string, { value?: unknown }>] }).qpdf[1]
    expect(objects['obj:9 0 R'].value).toEqual({
      '/CreationDate': 'u:D:20261130101500Z',
      '/ModDate': 'u:D:20261130101500Z',
    })
    expect(objects['obj:1 0 R'].value).toEqual({ '/Type': '/Catalog', '/Metadata': '10 0 R' })
    expect(objects['obj:10 0 R']).toHaveProperty('stream')
    expect(objects.trailer.value).toEqual({ '/Root': '1 0 R', '/Size': 9, '/Info': '9 0 R' })
    // No PDF/A: no metadata written.
    const plain = rewrittenInfoUpdate({ trailer, maxObjectId: 8 }, { info: { title: 'T' }, created: undefined, now })
    expect(plain.xmp).toBeUndefined()
    expect(Object.keys((plain.update as { qpdf: [unknown, object] }).qpdf[1])).toEqual(['obj:7 0 R'])
  })
})

describe('checkEditPdf and PDF/A', () => {
  it('refuses what a PDF/A document cannot hold: encryption, attachments, a transparent stamp in PDF/A-1b', () => {
    expect(checkEditPdf({ url: 'u', pdfa: 'PDF/A-2b' })).toEqual([])
    expect(checkEditPdf({ url: 'u', imageQuality: 50 })).toEqual([])
    expect(checkEditPdf({ url: 'u', pdfa: 'PDF/A-2b', encrypt: { userPassword: 'x' } }).map((p) => p.path)).toEqual([
      'encrypt',
    ])
    expect(checkEditPdf({ url: 'u', pdfa: 'PDF/A-3b', attachments: [{ url: 'a' }] }).map((p) => p.path)).toEqual([
      'attachments',
    ])
    expect(checkEditPdf({ url: 'u', pdfa: 'PDF/A-1b', stamp: { text: 'X' } }).map((p) => p.path)).toEqual([
      'stamp.opacity',
    ])
    expect(checkEditPdf({ url: 'u', pdfa: 'PDF/A-1b', stamp: { text: 'X', opacity: 1 } })).toEqual([])
    expect(checkEditPdf({ url: 'u', pdfa: 'PDF/A-2b', stamp: { text: 'X' } })).toEqual([])
  })
})

describe('checkEditPdf and PDF/UA', () => {
  it('takes pdfua with the edits that keep the tags, and refuses those that do not, naming each', () => {
    expect(
      checkEditPdf({ url: 'u', pdfua: true, info: { title: 'T' }, rotate: { angle: 90 }, linearize: true }),
    ).toEqual([])
    expect(
      checkEditPdf({
        url: 'u',
        pdfua: true,
        maxImageResolution: 150,
        stamp: { text: 'X' },
        flatten: true,
        encrypt: { userPassword: 'x' },
      }).map((p) => p.path),
    ).toEqual(['maxImageResolution', 'stamp', 'flatten', 'encrypt'])
    expect(checkEditPdf({ url: 'u', pdfua: true, pdfa: 'PDF/A-2b' }).map((p) => p.path)).toEqual(['pdfa'])
    expect(checkEditPdf({ url: 'u', pdfua: true, flatten: false })).toEqual([])
  })
})
