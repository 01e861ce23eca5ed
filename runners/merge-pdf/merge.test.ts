import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { degrees, PDFDocument, PDFName } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { MERGE_PDF_LIMITS } from './limits.js'
import { PIECE_BYTES, PdfMerger } from './merge.js'
import { fileScratch } from '../../test/support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratch = fileScratch('merge-')

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** A PDF of `n` pages whose widths are `first`, `first + 1`, …: the order is visible after a merge. */
async function pdfWithPages(n: number, first = 100): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  for (let i = 0; i < n; i++) doc.addPage([first + i, 300])
  return doc.save()
}

const widths = async (bytes: Uint8Array) => (await PDFDocument.load(bytes)).getPages().map((p) => p.getWidth())

/** Merges the inputs: the merged document, every piece written in order. */
async function mergeAll(m: PdfMerger, inputs: Uint8Array[]): Promise<Buffer> {
  const pieces: Uint8Array[] = []
  for (const bytes of inputs) pieces.push(...(await m.add(bytes)).pieces)
  pieces.push(...m.finish().pieces)
  return Buffer.concat(pieces)
}

describe('merge-pdf', () => {
  it("turns an input's pages as asked (added to their own turn) and writes the merged document's information", async () => {
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxPages: 500, maxTotalPages: 2000 })
    const turned = await PDFDocument.create()
    turned.addPage([100, 300]).setRotation(degrees(270))
    const pieces: Uint8Array[] = []
    pieces.push(...(await m.add(await pdfWithPages(1))).pieces)
    pieces.push(...(await m.add(await turned.save(), 180)).pieces)
    pieces.push(...(await m.add(await pdfWithPages(1), 90)).pieces)
    pieces.push(
      ...m.finish({ title: 'Rapport annuel — 2026', author: 'Ana', keywords: ['q4', 'finance'], producer: 'dutil' })
        .pieces,
    )
    const doc = await PDFDocument.load(Buffer.concat(pieces), { updateMetadata: false })
    expect(doc.getPages().map((p) => p.getRotation().angle)).toEqual([0, 90, 90])
    expect(doc.getTitle()).toBe('Rapport annuel — 2026')
    expect(doc.getAuthor()).toBe('Ana')
    expect(doc.getKeywords()).toBe('q4, finance')
    expect(doc.getProducer()).toBe('dutil')
    expect(doc.getSubject()).toBeUndefined()
  })

  it('writes no information dictionary when none is asked for', async () => {
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxPages: 500, maxTotalPages: 2000 })
    const merged = await mergeAll(m, [await pdfWithPages(1), await pdfWithPages(1)])
    expect(merged.toString('latin1')).not.toMatch(/\/Info /)
  })

  it('appends every page of every input, in the order given', async () => {
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxPages: 500, maxTotalPages: 2000 })
    const pieces: Uint8Array[] = []
    for (const [n, first] of [
      [2, 100],
      [3, 200],
      [1, 300],
    ]) {
      const added = await m.add(await pdfWithPages(n, first))
      expect(added.pages).toBe(n)
      pieces.push(...added.pieces)
    }
    expect(m.pageCount).toBe(6)
    const rest = m.finish()
    expect(rest.pageCount).toBe(6)
    expect(await widths(Buffer.concat([...pieces, ...rest.pieces]))).toEqual([100, 101, 200, 201, 202, 300])
    expect(m.pageCount).toBe(0)
  })

  it('writes each input out before the next: it holds the page tree and catalog, never the pages so far', async () => {
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxPages: 500, maxTotalPages: 2000 })
    const first = await m.add(await pdfWithPages(50, 100))
    // The fifty pages' objects are bytes already, and gone from memory.
    expect(m.heldObjects).toBe(2)
    expect(
      Buffer.concat(first.pieces)
        .toString('latin1')
        .match(/\/Type \/Page\b/g),
    ).toHaveLength(50)
    const second = await m.add(await pdfWithPages(30, 200))
    expect(m.heldObjects).toBe(2)
    const rest = m.finish()
    const dir = mkdtempSync(join(scratch, 'merge-'))
    const out = join(dir, 'merged.pdf')
    writeFileSync(out, Buffer.concat([...first.pieces, ...second.pieces, ...rest.pieces]))
    // qpdf reads every object through the cross-reference table: each offset must be exact.
    expect(execFileSync('qpdf', ['--check', out], { encoding: 'utf8' })).toContain(
      'No syntax or stream encoding errors',
    )
    expect(execFileSync('qpdf', ['--show-npages', out], { encoding: 'utf8' }).trim()).toBe('80')
  })

  it('writes one large object as a piece of its own, the small ones in pieces of bounded size', async () => {
    const doc = await PDFDocument.create()
    const page = doc.addPage([200, 200])
    // Incompressible content: a stream object of ~12 MB, bigger than a piece.
    const noise = Buffer.alloc(12 * 1024 * 1024)
    for (let i = 0; i < noise.length; i += 4) noise.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, i)
    page.node.set(PDFName.of('PieceTest'), doc.context.register(doc.context.stream(noise)))
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxPages: 500, maxTotalPages: 2000 })
    const { pieces } = await m.add(await doc.save())
    expect(pieces.some((p) => p.length > PIECE_BYTES)).toBe(true)
    expect(pieces.filter((p) => p.length > PIECE_BYTES + 1024)).toHaveLength(1)
    const merged = Buffer.concat([...pieces, ...m.finish().pieces])
    expect(await widths(merged)).toEqual([200])
  })

  it('keeps what the pages show: text drawn on a page survives the merge', async () => {
    const doc = await PDFDocument.create()
    doc.addPage([200, 200]).drawText('Quarterly figures', { x: 10, y: 100, size: 12 })
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxPages: 500, maxTotalPages: 2000 })
    const appendix = await PDFDocument.create()
    appendix.addPage([200, 200]).drawText('Appendix', { x: 10, y: 100, size: 12 })
    const dir = mkdtempSync(join(scratch, 'merge-'))
    writeFileSync(join(dir, 'out.pdf'), await mergeAll(m, [await doc.save(), await appendix.save()]))
    // qpdf's QDF form: every stream uncompressed, so page 1's text operator is readable.
    execFileSync('qpdf', ['--qdf', '--object-streams=disable', join(dir, 'out.pdf'), join(dir, 'qdf.pdf')])
    const qdf = readFileSync(join(dir, 'qdf.pdf'), 'latin1')
    const contents = (page: number) => qdf.split(`%% Contents for page ${page}\n`)[1]?.split('endstream')[0]
    expect(contents(1)).toContain('(Quarterly figures) Tj')
    expect(contents(2)).toContain('(Appendix) Tj')
    expect((await PDFDocument.load(readFileSync(join(dir, 'qdf.pdf')))).getPageCount()).toBe(2)
  })

  it('refuses an input over the per-input page limit, naming both numbers', async () => {
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxPages: 3, maxTotalPages: 2000 })
    await expect(m.add(await pdfWithPages(4))).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The PDF has 4 pages; at most 3 can be merged.',
    })
  })

  it('refuses the input that takes the merged document past the total page limit', async () => {
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxPages: 500, maxTotalPages: 5 })
    await m.add(await pdfWithPages(3))
    await expect(m.add(await pdfWithPages(3))).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The merged PDF would have 6 pages; at most 5 can be merged in all.',
    })
  })

  it('refuses what is not a PDF, a password-protected PDF and a decompression bomb', async () => {
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxPages: 500, maxTotalPages: 2000 })
    await expect(m.add(Buffer.from('<html>hello</html>'))).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The file is not a valid PDF.',
    })
    const dir = mkdtempSync(join(scratch, 'merge-'))
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

  it('refuses an input of more objects than one input may copy, before anything of it is copied or written', async () => {
    const doc = await PDFDocument.create()
    const page = doc.addPage([200, 200])
    // Tiny objects packed into compressed object streams: a small file that unpacks to many.
    const junk = Array.from({ length: 3000 }, (_, i) => doc.context.register(doc.context.obj(i)))
    page.node.set(PDFName.of('Junk'), doc.context.obj(junk))
    const bytes = await doc.save({ useObjectStreams: true })
    expect(bytes.length).toBeLessThan(40_000)
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxObjects: 2000 })
    await expect(m.add(bytes)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringMatching(/^The PDF has 30\d\d objects; at most 2000 of one input can be merged\.$/),
    })
    expect(m.pageCount).toBe(0)
    // The same input under the real limit merges.
    expect((await new PdfMerger(MERGE_PDF_LIMITS).add(bytes)).pages).toBe(1)
  })

  it('refuses to write a merged document past its byte bound: the input that would cross it fails', async () => {
    const input = await pdfWithPages(20)
    const size = (pieces: Uint8Array[]) => pieces.reduce((n, p) => n + p.length, 0)
    const probe = new PdfMerger(MERGE_PDF_LIMITS)
    const twice = size((await probe.add(input)).pieces) + size((await probe.add(input)).pieces)
    const m = new PdfMerger({ ...MERGE_PDF_LIMITS, maxOutputBytes: twice + 100 })
    await m.add(input)
    await m.add(input)
    await expect(m.add(input)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringContaining('the most a merge writes'),
    })
  })
})
