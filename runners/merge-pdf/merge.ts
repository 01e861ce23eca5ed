import { PDFDocument } from 'pdf-lib'
import { DecodeLimitError } from '../common/pdf-decode-guard.js'
import { bombMessage, loadPdf } from '../common/pdf-load.js'
import { rejected } from '../common/runner-error.js'

const MERGE = { verb: 'merged' }

export interface MergeLimits {
  /** Pages of one input. */
  maxPages: number
  /** Pages of the merged document. */
  maxTotalPages: number
}

/**
 * One merged document, built an input at a time: each input is parsed, its pages copied into the
 * output, and dropped before the next, so memory holds the output and one input (pdf-lib copies
 * only the objects the pages reach).
 */
export class PdfMerger {
  private out: PDFDocument | undefined
  private pages = 0

  constructor(private readonly limits: MergeLimits) {}

  get pageCount(): number {
    return this.pages
  }

  /** Appends every page of one input, in order; returns its page count. */
  async add(bytes: Uint8Array): Promise<number> {
    const src = await loadPdf(bytes, this.limits.maxPages, MERGE)
    const n = src.getPageCount()
    if (this.pages + n > this.limits.maxTotalPages)
      throw rejected(
        `The merged PDF would have ${this.pages + n} pages; at most ${this.limits.maxTotalPages} can be merged in all.`,
      )
    this.out ??= await PDFDocument.create({ updateMetadata: false })
    const copied = await this.out.copyPages(src, src.getPageIndices())
    for (const page of copied) this.out.addPage(page)
    this.pages += n
    return n
  }

  /** The merged document's bytes; the merger is empty again after. */
  async save(): Promise<Uint8Array> {
    if (!this.out) throw new Error('nothing to merge')
    try {
      // Without object streams: pdf-lib would deflate them in JavaScript (docs/benchmarks.md).
      return await this.out.save({ useObjectStreams: false })
    } catch (err) {
      if (err instanceof DecodeLimitError) throw rejected(bombMessage(err.limitBytes, MERGE))
      throw err
    } finally {
      this.out = undefined
      this.pages = 0
    }
  }
}
