import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PDFDocument } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { loadSplittable, pageFileName, splitPages } from './split.js'

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
    expect(pages.map((p) => p.pageNumber)).toEqual([1, 2, 3])
    for (const p of pages) {
      const single = await PDFDocument.load(p.bytes)
      expect(single.getPageCount()).toBe(1)
      expect(single.getPage(0).getWidth()).toBe(200 + p.pageNumber - 1)
    }
  })

  it('refuses a file that is not a PDF', async () => {
    await expect(loadSplittable(Buffer.from('<html>hello</html>'), 500)).rejects.toMatchObject({ code: 'upstream_rejected', message: 'The file is not a valid PDF.' })
  })

  it('refuses more pages than the limit, naming both numbers', async () => {
    await expect(loadSplittable(await pdfWithPages(4), 3)).rejects.toMatchObject({ code: 'upstream_rejected', message: 'The PDF has 4 pages; at most 3 can be split.' })
  })

  it('refuses a password-protected PDF', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'split-'))
    writeFileSync(join(dir, 'plain.pdf'), await pdfWithPages(1))
    execFileSync('qpdf', ['--encrypt', 'user', 'owner', '256', '--', join(dir, 'plain.pdf'), join(dir, 'locked.pdf')])
    await expect(loadSplittable(readFileSync(join(dir, 'locked.pdf')), 500)).rejects.toMatchObject({ code: 'upstream_rejected', message: expect.stringContaining('password-protected') })
  })

  it('pads page numbers so names sort in page order', () => {
    expect(pageFileName(7, 12)).toBe('page-007.pdf')
    expect(pageFileName(1000, 1000)).toBe('page-1000.pdf')
  })
})
