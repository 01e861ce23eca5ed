import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PDFDocument } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { PdfMerger } from './merge.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** A PDF of `n` pages whose widths are `first`, `first + 1`, …: the order is visible after a merge. */
async function pdfWithPages(n: number, first = 100): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  for (let i = 0; i < n; i++) doc.addPage([first + i, 300])
  return doc.save()
}

const widths = async (bytes: Uint8Array) => (await PDFDocument.load(bytes)).getPages().map((p) => p.getWidth())

describe('merge-pdf', () => {
  it('appends every page of every input, in the order given', async () => {
    const m = new PdfMerger({ maxPages: 500, maxTotalPages: 2000 })
    expect(await m.add(await pdfWithPages(2, 100))).toBe(2)
    expect(await m.add(await pdfWithPages(3, 200))).toBe(3)
    expect(await m.add(await pdfWithPages(1, 300))).toBe(1)
    expect(m.pageCount).toBe(6)
    expect(await widths(await m.save())).toEqual([100, 101, 200, 201, 202, 300])
    expect(m.pageCount).toBe(0)
  })

  it('keeps what the pages show: text drawn on a page survives the merge', async () => {
    const doc = await PDFDocument.create()
    doc.addPage([200, 200]).drawText('Quarterly figures', { x: 10, y: 100, size: 12 })
    const m = new PdfMerger({ maxPages: 500, maxTotalPages: 2000 })
    await m.add(await doc.save())
    const appendix = await PDFDocument.create()
    appendix.addPage([200, 200]).drawText('Appendix', { x: 10, y: 100, size: 12 })
    await m.add(await appendix.save())
    const dir = mkdtempSync(join(tmpdir(), 'merge-'))
    writeFileSync(join(dir, 'out.pdf'), await m.save())
    // qpdf's QDF form: every stream uncompressed, so page 1's text operator is readable.
    execFileSync('qpdf', ['--qdf', '--object-streams=disable', join(dir, 'out.pdf'), join(dir, 'qdf.pdf')])
    const qdf = readFileSync(join(dir, 'qdf.pdf'), 'latin1')
    const contents = (page: number) => qdf.split(`%% Contents for page ${page}\n`)[1]?.split('endstream')[0]
    expect(contents(1)).toContain('(Quarterly figures) Tj')
    expect(contents(2)).toContain('(Appendix) Tj')
    expect((await PDFDocument.load(readFileSync(join(dir, 'qdf.pdf')))).getPageCount()).toBe(2)
  })

  it('refuses an input over the per-input page limit, naming both numbers', async () => {
    const m = new PdfMerger({ maxPages: 3, maxTotalPages: 2000 })
    await expect(m.add(await pdfWithPages(4))).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The PDF has 4 pages; at most 3 can be merged.',
    })
  })

  it('refuses the input that takes the merged document past the total page limit', async () => {
    const m = new PdfMerger({ maxPages: 500, maxTotalPages: 5 })
    await m.add(await pdfWithPages(3))
    await expect(m.add(await pdfWithPages(3))).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The merged PDF would have 6 pages; at most 5 can be merged in all.',
    })
  })

  it('refuses what is not a PDF, a password-protected PDF and a decompression bomb', async () => {
    const m = new PdfMerger({ maxPages: 500, maxTotalPages: 2000 })
    await expect(m.add(Buffer.from('<html>hello</html>'))).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The file is not a valid PDF.',
    })
    const dir = mkdtempSync(join(tmpdir(), 'merge-'))
    writeFileSync(join(dir, 'plain.pdf'), await pdfWithPages(1))
    execFileSync('qpdf', ['--encrypt', 'user', 'owner', '256', '--', join(dir, 'plain.pdf'), join(dir, 'locked.pdf')])
    await expect(m.add(readFileSync(join(dir, 'locked.pdf')))).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The PDF is password-protected (encrypted); it cannot be merged.',
    })
    await expect(m.add(readFileSync(join(REPO, 'test/fixtures/hostile/decompression-bomb.pdf')))).rejects.toMatchObject(
      { code: 'upstream_rejected', message: expect.stringContaining('decompression bomb') },
    )
  })
})
