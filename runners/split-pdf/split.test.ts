import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PDFDocument } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { pageGroups } from './groups.js'
import { groupFileName, pageFileName } from './page-names.js'
import { loadSplittable, splitPages } from './split.js'
import { fileScratch } from '../../test/support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratch = fileScratch('split-')

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

async function pdfWithPages(n: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  for (let i = 0; i < n; i++) doc.addPage([200 + i, 300])
  return doc.save()
}

describe('split-pdf', () => {
  it('splits every page into its own single-page PDF, in order', async () => {
    const doc = await loadSplittable(await pdfWithPages(3), 500)
    const pages = []
    for await (const p of splitPages(doc)) pages.push(p)
    expect(pages.map((p) => p.pages)).toEqual([[1], [2], [3]])
    for (const p of pages) {
      const single = await PDFDocument.load(p.bytes)
      expect(single.getPageCount()).toBe(1)
      expect(single.getPage(0).getWidth()).toBe(200 + p.pages[0] - 1)
    }
  })

  it('splits into files of every n pages, or the pages asked for, one file each or one in all', async () => {
    const doc = await loadSplittable(await pdfWithPages(5), 500)
    const widths = async (groups: number[][]) => {
      const out: number[][] = []
      for await (const p of splitPages(doc, groups))
        out.push((await PDFDocument.load(p.bytes)).getPages().map((page) => page.getWidth() - 199))
      return out
    }
    expect(await widths(pageGroups(5, { every: 2 }))).toEqual([[1, 2], [3, 4], [5]])
    expect(await widths(pageGroups(5, { pages: '4-,1' }))).toEqual([[4], [5], [1]])
    expect(await widths(pageGroups(5, { pages: '2-3, 5', unify: true }))).toEqual([[2, 3, 5]])
    expect(() => pageGroups(5, { pages: '4-6' })).toThrow(
      /The PDF has 5 pages; the pages asked for \(4-6\) go past its end/,
    )
    expect(() => pageGroups(5, { pages: '3-2' })).toThrow(/runs backwards/)
    expect(groupFileName([2, 3, 4], 5)).toBe('pages-002-004.pdf')
    expect(groupFileName([2, 5], 5)).toBe('pages-002-and-more.pdf')
    expect(groupFileName([7], 12)).toBe('page-007.pdf')
  })

  it('refuses a file that is not a PDF', async () => {
    await expect(loadSplittable(Buffer.from('<html>hello</html>'), 500)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The file is not a valid PDF.',
    })
  })

  it('refuses more pages than the limit, naming both numbers', async () => {
    await expect(loadSplittable(await pdfWithPages(4), 3)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The PDF has 4 pages; at most 3 can be split.',
    })
  })

  it('refuses a password-protected PDF', async () => {
    const dir = mkdtempSync(join(scratch, 'split-'))
    writeFileSync(join(dir, 'plain.pdf'), await pdfWithPages(1))
    execFileSync('qpdf', ['--encrypt', 'user', 'owner', '256', '--', join(dir, 'plain.pdf'), join(dir, 'locked.pdf')])
    await expect(loadSplittable(readFileSync(join(dir, 'locked.pdf')), 500)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringContaining('password-protected'),
    })
  })

  it('pads page numbers so names sort in page order', () => {
    expect(pageFileName(7, 12)).toBe('page-007.pdf')
    expect(pageFileName(1000, 1000)).toBe('page-1000.pdf')
  })
})

describe('split-pdf against decompression bombs', () => {
  it('refuses a PDF whose object stream inflates past the cap, without allocating it', async () => {
    const bomb = readFileSync(join(REPO, 'test/fixtures/hostile/decompression-bomb.pdf'))
    const before = process.memoryUsage().arrayBuffers
    await expect(loadSplittable(bomb, 500)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringContaining('decompression bomb'),
    })
    // The 1 GiB never materialised: growth stays near the 128 MB cap.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(400 * 1024 ** 2)
  })

  it('still splits ordinary PDFs that use object streams', async () => {
    const doc = await PDFDocument.create()
    for (let i = 0; i < 3; i++) doc.addPage([100, 100])
    const withObjectStreams = await doc.save({ useObjectStreams: true })
    const loaded = await loadSplittable(withObjectStreams, 500)
    expect(loaded.getPageCount()).toBe(3)
  })

  it('refuses truncated files', async () => {
    await expect(
      loadSplittable(readFileSync(join(REPO, 'test/fixtures/hostile/truncated.pdf')), 500),
    ).rejects.toMatchObject({ code: 'upstream_rejected' })
  })
})
