import { PDFDocument } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { bundledWorker } from '../../test/support/bundled-worker.js'
import { MERGE_PDF_LIMITS } from './limits.js'
import { keptMergeWorker, mergeInWorker } from './merge-in-worker.js'

// The worker runs as the runner runs it: bundled (runners/bundle-runners.ts).
const worker = bundledWorker('runners/merge-pdf/merge.worker.ts')

async function pdfWithPages(n: number, first = 100): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  for (let i = 0; i < n; i++) doc.addPage([first + i, 300])
  return doc.save()
}

const LIMITS = { ...MERGE_PDF_LIMITS, maxPages: 500, maxTotalPages: 2000 }

/** Merges the inputs through the worker; the merged pages' widths. */
async function mergedWidths(inputs: Uint8Array[], heapMb = 256): Promise<number[]> {
  const merge = await mergeInWorker(LIMITS, heapMb, worker.url)
  try {
    const pieces: Uint8Array[] = []
    for (const bytes of inputs) pieces.push(...(await merge.add(bytes)).pieces)
    const rest = await merge.finish()
    const pageCount = rest.pageCount
    const widths = (await PDFDocument.load(Buffer.concat([...pieces, ...rest.pieces])))
      .getPages()
      .map((p) => p.getWidth())
    expect(widths).toHaveLength(pageCount)
    return widths
  } catch (err) {
    await merge.abort()
    throw err
  }
}

describe('the merge worker', () => {
  it('merges in order and is kept between merges, each merge holding its own pages only', async () => {
    expect(await mergedWidths([await pdfWithPages(2, 100), await pdfWithPages(1, 200)])).toEqual([100, 101, 200])
    const kept = keptMergeWorker()
    expect(kept).not.toBeNull()
    expect(await mergedWidths([await pdfWithPages(1, 300), await pdfWithPages(1, 400)])).toEqual([300, 400])
    expect(keptMergeWorker()).toBe(kept)
  })

  it('takes a small Buffer from Node’s shared pool without detaching the pool', async () => {
    const small = Buffer.from(await pdfWithPages(1, 150)) // a few hundred bytes: a view into the pool
    const neighbour = Buffer.from('still here')
    expect(await mergedWidths([small, await pdfWithPages(1, 250)])).toEqual([150, 250])
    expect(small.byteLength).toBeGreaterThan(0)
    expect(neighbour.toString()).toBe('still here')
  })

  it('is kept after a refusal it classified, and merges the next PDFs', async () => {
    await mergedWidths([await pdfWithPages(1), await pdfWithPages(1)])
    const kept = keptMergeWorker()
    await expect(
      mergedWidths([await pdfWithPages(1), new TextEncoder().encode('<html>no</html>')]),
    ).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'The file is not a valid PDF.',
    })
    expect(keptMergeWorker()).toBe(kept)
    expect(await mergedWidths([await pdfWithPages(1, 500), await pdfWithPages(1, 600)])).toEqual([500, 600])
  })

  it(
    'is replaced when it runs out of its heap, which fails the merge naming the limit',
    { timeout: 60_000 },
    async () => {
      const doc = await PDFDocument.create()
      for (let i = 0; i < 4000; i++) doc.addPage([200, 300])
      const big = await doc.save({ useObjectStreams: false })
      const merge = await mergeInWorker(
        { ...MERGE_PDF_LIMITS, maxPages: 100_000, maxTotalPages: 100_000 },
        16,
        worker.url,
      )
      await expect(merge.add(big)).rejects.toThrow('The PDFs need more than 16 MB of memory to merge (memory limit).')
      expect(keptMergeWorker()).toBeNull()
      expect(await mergedWidths([await pdfWithPages(1, 700), await pdfWithPages(1, 800)])).toEqual([700, 800])
    },
  )
})
