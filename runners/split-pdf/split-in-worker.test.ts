import { PDFDocument } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { bundledWorker } from '../../test/support/bundled-worker.js'
import { keptSplitWorker, splitInWorker } from './split-in-worker.js'

// The worker runs as the runner runs it: bundled (runners/bundle-runners.ts).
const worker = bundledWorker('runners/split-pdf/split.worker.ts')

async function pdfWithPages(n: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  for (let i = 0; i < n; i++) doc.addPage([200 + i, 300])
  return doc.save()
}

async function pageWidths(bytes: Uint8Array, heapMb = 256, maxPages = 100): Promise<number[]> {
  const { total, pages } = await splitInWorker(bytes, maxPages, heapMb, 2, worker.url)
  const widths: number[] = []
  for await (const p of pages) widths.push((await PDFDocument.load(p.bytes)).getPage(0).getWidth())
  expect(widths).toHaveLength(total)
  return widths
}

describe('the split worker', () => {
  it('is kept between splits: the next PDF is split by the same worker, with its own pages only', async () => {
    expect(await pageWidths(await pdfWithPages(5))).toEqual([200, 201, 202, 203, 204])
    const kept = keptSplitWorker()
    expect(kept).not.toBeNull()
    expect(await pageWidths(await pdfWithPages(3))).toEqual([200, 201, 202])
    expect(keptSplitWorker()).toBe(kept)
  })

  it('is kept after a refusal it classified, and splits the next PDF', async () => {
    await pageWidths(await pdfWithPages(1))
    const kept = keptSplitWorker()
    await expect(pageWidths(new TextEncoder().encode('<html>not a pdf</html>'))).rejects.toMatchObject({
      code: 'upstream_rejected',
    })
    expect(keptSplitWorker()).toBe(kept)
    expect(await pageWidths(await pdfWithPages(2))).toEqual([200, 201])
  })

  it('is ended when its pages are not all taken, and a new one splits the next PDF', async () => {
    await pageWidths(await pdfWithPages(1))
    const before = keptSplitWorker()
    const { pages } = await splitInWorker(await pdfWithPages(6), 100, 256, 2, worker.url)
    for await (const p of pages) {
      expect(p.pages).toEqual([1])
      break
    }
    expect(keptSplitWorker()).toBeNull()
    expect(await pageWidths(await pdfWithPages(2))).toEqual([200, 201])
    expect(keptSplitWorker()).not.toBe(before)
  })

  it('is replaced when it runs out of its heap, which fails the split naming the limit', async () => {
    // 4,000 pages, each its own objects once parsed: more than an 8 MB heap holds.
    const doc = await PDFDocument.create()
    for (let i = 0; i < 4000; i++) doc.addPage([200, 300])
    const big = await doc.save({ useObjectStreams: false })
    await expect(pageWidths(big, 8, 100_000)).rejects.toThrow(
      'The PDF needs more than 8 MB of memory to split (memory limit).',
    )
    expect(keptSplitWorker()).toBeNull()
    expect(await pageWidths(await pdfWithPages(2))).toEqual([200, 201])
  })
})
