import { describe, expect, it } from 'vitest'
import { bookmarksOf, dateExtras, isLinearized, isoDateOf, pdfVersionOf, TooManyBookmarks } from './info.js'

describe('isoDateOf', () => {
  it.each([
    ["D:20240105093000+01'00'", '2024-01-05T09:30:00+01:00'],
    ["D:20240105093000-05'30", '2024-01-05T09:30:00-05:30'],
    ['D:20240105093000Z', '2024-01-05T09:30:00Z'],
    ["D:20240105093000Z00'00'", '2024-01-05T09:30:00Z'],
    ['D:20240105093000', '2024-01-05T09:30:00'],
    ['D:2024', '2024-01-01T00:00:00'],
    ['D:202401', '2024-01-01T00:00:00'],
  ])('reads %s as %s', (pdf, iso) => {
    expect(isoDateOf(pdf)).toBe(iso)
  })

  it.each([
    '2024-01-05',
    'D:20241305000000Z',
    'D:20240100000000Z',
    'D:20240105250000Z',
    "D:20240105093000+15'00'",
    'yesterday',
    '',
  ])('is undefined for %j', (text) => {
    expect(isoDateOf(text)).toBeUndefined()
  })
})

describe('dateExtras', () => {
  it('reads the text dates of an Info dictionary, leaving out what is not a date', () => {
    expect(
      dateExtras({ '/CreationDate': 'u:D:20240105093000Z', '/ModDate': 'u:last Tuesday', '/Title': 'u:x' }),
    ).toEqual({ created: '2024-01-05T09:30:00Z' })
    expect(dateExtras({ '/CreationDate': 'b:443a3230323430313035' })).toEqual({})
    expect(dateExtras(undefined)).toEqual({})
  })
})

describe('pdfVersionOf', () => {
  it("reads qpdf's pdfversion, and nothing that is not a version", () => {
    expect(pdfVersionOf({ qpdf: [{ pdfversion: '1.7' }, {}] })).toBe('1.7')
    expect(pdfVersionOf({ qpdf: [{ pdfversion: '2.0' }, {}] })).toBe('2.0')
    expect(pdfVersionOf({ qpdf: [{ pdfversion: '<script>' }, {}] })).toBeUndefined()
    expect(pdfVersionOf({})).toBeUndefined()
  })
})

describe('isLinearized', () => {
  it('finds a linearization dictionary in the first kilobyte only', () => {
    const lin = Buffer.from(
      '%PDF-1.7\n%\xe2\xe3\n1 0 obj\n<< /Linearized 1 /L 1234 /H [ 500 100 ] /O 3 /E 900 /N 2 /T 1100 >>\nendobj\n',
      'latin1',
    )
    expect(isLinearized(lin)).toBe(true)
    expect(isLinearized(Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n'))).toBe(false)
    expect(isLinearized(Buffer.concat([Buffer.alloc(2000, 0x20), lin]))).toBe(false)
  })
})

describe('bookmarksOf', () => {
  const outline = {
    outlines: [
      {
        title: 'Index ✓',
        destpageposfrom1: 1,
        kids: [{ title: 'Sub', destpageposfrom1: 2, kids: [] }],
      },
      { title: 'Elsewhere', destpageposfrom1: null, kids: [] },
    ],
  }

  it("reads qpdf's outline as titles, pages from 1 (null for none) and children", () => {
    expect(bookmarksOf(outline, 10)).toEqual({
      count: 3,
      bookmarks: [
        { title: 'Index ✓', page: 1, children: [{ title: 'Sub', page: 2 }] },
        { title: 'Elsewhere', page: null },
      ],
    })
    expect(bookmarksOf({ outlines: [] }, 10)).toEqual({ bookmarks: [], count: 0 })
    expect(bookmarksOf({}, 10)).toEqual({ bookmarks: [], count: 0 })
  })

  it('refuses an outline past the limit rather than answering part of it', () => {
    expect(() => bookmarksOf(outline, 2)).toThrow(TooManyBookmarks)
    expect(bookmarksOf(outline, 3).bookmarks).toHaveLength(2)
  })

  it('takes nothing but text titles and whole page numbers', () => {
    expect(bookmarksOf({ outlines: [{ title: 7, destpageposfrom1: 1.5, kids: 'x' }] }, 10).bookmarks).toEqual([
      { title: '', page: null },
    ])
  })
})
