import { describe, expect, it } from 'vitest'
import { documentUpdate } from './edit.js'
import { bookmarkCount, outlineObjects, pageOutside, pageRefsOf } from './outline.js'
import { checkEditPdf } from './utility.js'

const marks = [
  { title: 'Chapter ✓', page: 1, children: [{ title: 'Section', page: 2 }] },
  { title: 'Two', page: 2 },
]

describe('outlineObjects', () => {
  it('links each item to its parent and siblings, counting the items open below each', () => {
    const { objects, outlines, nextId } = outlineObjects(marks, ['3 0 R', '4 0 R'], 10)
    expect(outlines).toBe('10 0 R')
    expect(nextId).toBe(14)
    expect(objects).toEqual({
      'obj:10 0 R': { value: { '/Type': '/Outlines', '/First': '11 0 R', '/Last': '12 0 R', '/Count': 3 } },
      'obj:11 0 R': {
        value: {
          '/Title': 'u:Chapter ✓',
          '/Parent': '10 0 R',
          '/Dest': ['3 0 R', '/Fit'],
          '/Next': '12 0 R',
          '/First': '13 0 R',
          '/Last': '13 0 R',
          '/Count': 1,
        },
      },
      'obj:13 0 R': { value: { '/Title': 'u:Section', '/Parent': '11 0 R', '/Dest': ['4 0 R', '/Fit'] } },
      'obj:12 0 R': {
        value: { '/Title': 'u:Two', '/Parent': '10 0 R', '/Dest': ['4 0 R', '/Fit'], '/Prev': '11 0 R' },
      },
    })
  })

  it('counts bookmarks at every level and finds a page past the end', () => {
    expect(bookmarkCount(marks)).toBe(3)
    expect(pageOutside(marks, 2)).toBeUndefined()
    expect(pageOutside(marks, 1)).toBe(2)
    expect(pageRefsOf({ pages: [{ object: '3 0 R' }, { object: '4 0 R' }] })).toEqual(['3 0 R', '4 0 R'])
  })
})

describe('documentUpdate', () => {
  const facts = { trailer: { '/Root': '1 0 R' }, maxObjectId: 4 }
  const root = { ref: '1 0 R', value: { '/Type': '/Catalog', '/Pages': '2 0 R', '/Outlines': '9 0 R' } }

  it("replaces the catalog's outline, numbering after a new Info dictionary", () => {
    const update = documentUpdate(facts, {
      info: { current: undefined, info: { title: 'T' }, now: new Date('2026-11-29T10:00:00Z') },
      outline: { root, pageRefs: ['3 0 R', '4 0 R'], bookmarks: [{ title: 'One', page: 2 }] },
    }) as { qpdf: [unknown, Record<string, { value: Record<string, unknown> }>] }
    const objects = update.qpdf[1]
    // 5: the new Info dictionary; 6: the outline; 7: its item.
    expect(objects['obj:5 0 R'].value['/Title']).toBe('u:T')
    expect(objects['obj:1 0 R'].value).toEqual({ '/Type': '/Catalog', '/Pages': '2 0 R', '/Outlines': '6 0 R' })
    expect(objects['obj:7 0 R'].value).toMatchObject({ '/Title': 'u:One', '/Dest': ['4 0 R', '/Fit'] })
  })

  it('removes the outline for no bookmarks', () => {
    const update = documentUpdate(facts, { outline: { root, pageRefs: ['3 0 R'], bookmarks: [] } }) as {
      qpdf: [unknown, Record<string, { value: Record<string, unknown> }>]
    }
    expect(update.qpdf[1]).toEqual({ 'obj:1 0 R': { value: { '/Type': '/Catalog', '/Pages': '2 0 R' } } })
  })

  it('takes bookmarks as an edit of their own, within 10,000 in all', () => {
    expect(checkEditPdf({ url: 'u', bookmarks: [] })).toEqual([])
    const many = Array.from({ length: 101 }, (_, i) => ({
      title: `${i}`,
      page: 1,
      children: Array.from({ length: 99 }, () => ({ title: 'x', page: 1 })),
    }))
    expect(checkEditPdf({ url: 'u', bookmarks: many })).toEqual([
      { path: 'bookmarks', message: 'holds more than 10,000 bookmarks in all' },
    ])
  })
})
