import { describe, expect, it } from 'vitest'
import { documentInfoOf, infoExtras, pdfFactsOf } from '../common/pdf-facts.js'
import { infoUpdate, pdfDate, qpdfArgs, qpdfRanges } from './edit.js'
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

  it('writes pages as ascending runs', () => {
    expect(qpdfRanges([5, 1, 2, 3, 3, 9, 8])).toBe('1-3,5,8-9')
    expect(qpdfRanges([7])).toBe('7')
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
    ).toEqual({ pageCount: 2, encrypted: false, trailer: { '/Root': '1 0 R' }, maxObjectId: 9 })
    expect(() => pdfFactsOf({ qpdf: [{ maxobjectid: 9 }, { trailer: { value: {} } }] }, 'x')).toThrow(
      /without its page count/,
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
