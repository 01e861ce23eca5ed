import {
  degrees,
  PDFCrossRefSection,
  PDFHexString,
  PDFDict,
  PDFDocument,
  PDFHeader,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFRef,
  PDFTrailer,
  PDFTrailerDict,
  type PDFContext,
} from 'pdf-lib'
import { DecodeLimitError } from '../common/pdf-decode-guard.js'
import { bombMessage, loadPdf } from '../common/pdf-load.js'
import { rejected } from '../common/runner-error.js'
import type { DocumentInfo } from '../common/document-info-schema.js'

const MERGE = { verb: 'merged' }

/** Objects are written in pieces of about this size (one larger object is a piece of its own). */
export const PIECE_BYTES = 8 * 1024 * 1024

export interface MergeLimits {
  /** Pages of one input. */
  maxPages: number
  /** Pages of the merged document. */
  maxTotalPages: number
  /** Indirect objects of one input: all it could copy into the merged document. */
  maxObjects: number
  /** Bytes of the merged document. */
  maxOutputBytes: number
}

/** The merged document's information (its Info dictionary): what a PDF reader shows as its properties. */
export type { DocumentInfo }

/** Quarter turns a page may be given, clockwise. */
export type Rotation = 90 | 180 | 270

/** Bytes of the merged document, in order: concatenated, every piece of a merge is the PDF. */
export type Pieces = Uint8Array[]

const ascii = (s: string) => new TextEncoder().encode(s)

/**
 * One merged document, written as it is built: each input is parsed, its pages copied into the
 * output, those objects written out as bytes and dropped, and the input dropped before the next.
 * Memory holds one input and its copy, never the document so far; the page tree, the catalog and
 * the cross-reference table (an offset per object) come at the end.
 */
export class PdfMerger {
  private out: { doc: PDFDocument; context: PDFContext; pagesRef: PDFRef } | undefined
  private readonly kids: PDFRef[] = []
  private readonly offsets = new Map<number, number>()
  private written = 0

  constructor(private readonly limits: MergeLimits) {}

  get pageCount(): number {
    return this.kids.length
  }

  /** Indirect objects held in memory (the page tree and catalog between inputs). */
  get heldObjects(): number {
    return this.out?.context.enumerateIndirectObjects().length ?? 0
  }

  /**
   * Appends every page of one input, in order (each turned `rotate` degrees clockwise more than
   * it was): its page count and the bytes it added.
   */
  async add(bytes: Uint8Array, rotate?: Rotation): Promise<{ pages: number; pieces: Pieces }> {
    const src = await loadPdf(bytes, this.limits.maxPages, MERGE)
    // A small file can hold millions of tiny objects in compressed object streams, each of them
    // written out on its own: such an input is refused before anything of it is copied.
    const objects = src.context.enumerateIndirectObjects().length
    if (objects > this.limits.maxObjects)
      throw rejected(`The PDF has ${objects} objects; at most ${this.limits.maxObjects} of one input can be merged.`)
    const n = src.getPageCount()
    if (this.kids.length + n > this.limits.maxTotalPages)
      throw rejected(
        `The merged PDF would have ${this.kids.length + n} pages; at most ${this.limits.maxTotalPages} can be merged in all.`,
      )
    const pieces: Pieces = []
    if (!this.out) {
      const doc = await PDFDocument.create({ updateMetadata: false })
      this.out = { doc, context: doc.context, pagesRef: doc.catalog.get(PDFName.of('Pages')) as PDFRef }
      const header = PDFHeader.forVersion(1, 7)
      const head = new Uint8Array(header.sizeInBytes() + 2)
      header.copyBytesInto(head, 0)
      head.fill(0x0a, head.length - 2)
      pieces.push(head)
      this.written = head.length
    }
    const { doc, context, pagesRef } = this.out
    const copied = await guarded(() => doc.copyPages(src, src.getPageIndices()))
    for (const page of copied) {
      if (rotate) page.setRotation(degrees((((page.getRotation().angle + rotate) % 360) + 360) % 360))
      page.node.set(PDFName.of('Parent'), pagesRef)
      this.kids.push(page.ref)
    }
    const keep = new Set([pagesRef.objectNumber, (context.trailerInfo.Root as PDFRef).objectNumber])
    const done = context.enumerateIndirectObjects().filter(([ref]) => !keep.has(ref.objectNumber))
    pieces.push(...this.write(done))
    for (const [ref] of done) context.delete(ref)
    return { pages: n, pieces }
  }

  /** The rest of the merged document: its page tree, catalog, information and cross-reference table. */
  finish(info?: DocumentInfo): { pageCount: number; pieces: Pieces } {
    if (!this.out) throw new Error('nothing to merge')
    const { context, pagesRef } = this.out
    const infoRef = info && Object.keys(info).length ? context.register(infoDict(context, info)) : undefined
    const pages = context.lookup(pagesRef, PDFDict)
    pages.set(PDFName.of('Kids'), context.obj(this.kids))
    pages.set(PDFName.of('Count'), PDFNumber.of(this.kids.length))
    const pieces = this.write(context.enumerateIndirectObjects())
    const xref = PDFCrossRefSection.create()
    for (const n of [...this.offsets.keys()].sort((a, b) => a - b)) xref.addEntry(PDFRef.of(n), this.offsets.get(n)!)
    const trailerDict = PDFTrailerDict.of(
      context.obj({
        Size: context.largestObjectNumber + 1,
        Root: context.trailerInfo.Root as PDFRef,
        ...(infoRef ? { Info: infoRef } : {}),
      }),
    )
    const trailer = PDFTrailer.forLastCrossRefSectionOffset(this.written)
    const tail = new Uint8Array(xref.sizeInBytes() + 1 + trailerDict.sizeInBytes() + 2 + trailer.sizeInBytes())
    let at = xref.copyBytesInto(tail, 0)
    tail[at++] = 0x0a
    at += trailerDict.copyBytesInto(tail, at)
    tail[at++] = 0x0a
    tail[at++] = 0x0a
    trailer.copyBytesInto(tail, at)
    pieces.push(tail)
    const pageCount = this.kids.length
    this.out = undefined
    this.kids.length = 0
    this.offsets.clear()
    this.written = 0
    return { pageCount, pieces }
  }

  /** Serializes indirect objects as `n g obj … endobj`, recording each one's offset. */
  private write(objects: Array<[PDFRef, PDFObject]>): Pieces {
    const pieces: Pieces = []
    let batch: Array<{ head: Uint8Array; object: PDFObject; size: number }> = []
    let batchBytes = 0
    const flush = () => {
      if (batch.length === 0) return
      const piece = new Uint8Array(batchBytes)
      let at = 0
      for (const { head, object } of batch) {
        piece.set(head, at)
        at += head.length
        at += guardedSync(() => object.copyBytesInto(piece, at))
        piece.set(END_OBJ, at)
        at += END_OBJ.length
      }
      pieces.push(piece)
      batch = []
      batchBytes = 0
    }
    for (const [ref, object] of objects) {
      const head = ascii(`${ref.objectNumber} ${ref.generationNumber} obj\n`)
      const size = head.length + guardedSync(() => object.sizeInBytes()) + END_OBJ.length
      if (this.written + size > this.limits.maxOutputBytes)
        throw rejected(
          `The merged PDF would be larger than ${Math.round(this.limits.maxOutputBytes / 1024 ** 2)} MB, the most a merge writes.`,
        )
      if (batchBytes > 0 && batchBytes + size > PIECE_BYTES) flush()
      this.offsets.set(ref.objectNumber, this.written)
      this.written += size
      batch.push({ head, object, size })
      batchBytes += size
    }
    flush()
    return pieces
  }
}

const END_OBJ = ascii('\nendobj\n\n')

/** A stream that expands past the decode guard's cap while being copied or written is a bomb. */
function asRefusal(err: unknown): unknown {
  return err instanceof DecodeLimitError ? rejected(bombMessage(err.limitBytes, MERGE)) : err
}

async function guarded<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f()
  } catch (err) {
    throw asRefusal(err)
  }
}

function guardedSync<T>(f: () => T): T {
  try {
    return f()
  } catch (err) {
    throw asRefusal(err)
  }
}

/** The Info dictionary of `info`: text strings as UTF-16 (any language), keywords joined by commas. */
function infoDict(context: PDFContext, info: DocumentInfo): PDFDict {
  const entries: Record<string, string | undefined> = {
    Title: info.title,
    Author: info.author,
    Subject: info.subject,
    Keywords: info.keywords?.join(', '),
    Creator: info.creator,
    Producer: info.producer,
  }
  const dict = context.obj({})
  for (const [name, text] of Object.entries(entries))
    if (text !== undefined) dict.set(PDFName.of(name), PDFHexString.fromText(text))
  return dict
}
