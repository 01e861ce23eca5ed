import { randomBytes } from 'node:crypto'
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFString } from 'pdf-lib'
import type { DocumentInfo } from './document-info-schema.js'
import { rejected } from './runner-error.js'
import { srgbProfile } from './srgb-icc.js'
import { xmpPacket, type PdfaLevel } from './xmp.js'

/**
 * A PDF that has what PDF/A-2 or PDF/UA-1 ask of its content made archival or accessible, or
 * both, by what the standards ask of its file. Chromium's PDF (html-pdf) embeds its fonts, writes
 * its pages in device RGB, tags them when asked and sets the document's language; a tagged PDF
 * from elsewhere (edit-pdf's pdfua) has its structure already. What they lack is added here with
 * pdf-lib (loaded only by a job that asks): XMP metadata, an output intent, a trailer identifier,
 * described links, the title shown; the rest of the document is copied as it is. The documents
 * this makes are checked by veraPDF in the tests.
 */

export interface ArchivalOptions {
  pdfa?: Extract<PdfaLevel, 'PDF/A-2b' | 'PDF/A-3b'>
  pdfua?: boolean
  /** What a refusal names, and how the caller gives what is missing (html-pdf: the page's). */
  refusal: { field: string; title: string; language: string; structure: string }
}

const text = (value: unknown): string | undefined =>
  value instanceof PDFString || value instanceof PDFHexString ? value.decodeText() : undefined

/** An XMP date of a PDF date as pdf-lib reads it. */
const xmpDateOf = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z')

export async function archivalPdf(bytes: Uint8Array, o: ArchivalOptions): Promise<Uint8Array> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false })
  const { catalog, context } = doc
  const title = doc.getTitle()
  if (o.pdfua) {
    const { field, ...why } = o.refusal
    if (!title?.trim()) throw rejected(`${field}: ${why.title}`)
    if (!text(catalog.lookup(PDFName.of('Lang')))?.trim()) throw rejected(`${field}: ${why.language}`)
    const marked = catalog.lookupMaybe(PDFName.of('MarkInfo'), PDFDict)?.get(PDFName.of('Marked'))
    if (!catalog.has(PDFName.of('StructTreeRoot')) || marked?.toString() !== 'true')
      throw rejected(`${field}: ${why.structure}`)
    catalog.set(PDFName.of('ViewerPreferences'), context.obj({ DisplayDocTitle: true }))
    describeLinks(doc)
  }
  const info: DocumentInfo = {}
  if (title) info.title = title
  const author = doc.getAuthor()
  if (author) info.author = author
  const subject = doc.getSubject()
  if (subject) info.subject = subject
  const keywords = doc.getKeywords()
  if (keywords)
    info.keywords = keywords
      .split(/[,;]/)
      .map((k) => k.trim())
      .filter(Boolean)
  const creator = doc.getCreator()
  if (creator) info.creator = creator
  const producer = doc.getProducer()
  if (producer) info.producer = producer
  // The Info dictionary's dates as they are, written where they lack.
  const now = new Date()
  const created = doc.getCreationDate() ?? now
  const modified = doc.getModificationDate() ?? created
  doc.setCreationDate(created)
  doc.setModificationDate(modified)
  const xmp = xmpPacket({
    ...(o.pdfa ? { pdfa: o.pdfa } : {}),
    ...(o.pdfua ? { pdfua: true } : {}),
    info,
    created: xmpDateOf(created),
    modified: xmpDateOf(modified),
  })
  // The metadata stream is not compressed: readers and validators read it as XML.
  catalog.set(
    PDFName.of('Metadata'),
    context.register(context.stream(Buffer.from(xmp, 'utf8'), { Type: 'Metadata', Subtype: 'XML' })),
  )
  if (o.pdfa) {
    const profile = context.register(context.flateStream(srgbProfile(), { N: 3 }))
    const intent = context.obj({
      Type: 'OutputIntent',
      S: 'GTS_PDFA1',
      OutputConditionIdentifier: PDFString.of('sRGB IEC61966-2.1'),
      Info: PDFString.of('sRGB IEC61966-2.1'),
      DestOutputProfile: profile,
    })
    catalog.set(PDFName.of('OutputIntents'), context.obj([intent]))
  }
  // A trailer identifier (PDF/A asks for one; Chromium writes none).
  const id = PDFHexString.of(randomBytes(16).toString('hex'))
  context.trailerInfo.ID = context.obj([id, id])
  return doc.save({ useObjectStreams: false, updateFieldAppearances: false })
}

/**
 * Each link described for assistive technology (its Contents, which PDF/UA asks of every
 * annotation): where it leads, as Chromium wrote no words for it.
 */
function describeLinks(doc: PDFDocument): void {
  for (const page of doc.getPages()) {
    const annots = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray)
    if (!annots) continue
    for (let i = 0; i < annots.size(); i++) {
      const annot = annots.lookupMaybe(i, PDFDict)
      if (!annot || annot.get(PDFName.of('Subtype')) !== PDFName.of('Link') || annot.has(PDFName.of('Contents')))
        continue
      const uri = text(annot.lookupMaybe(PDFName.of('A'), PDFDict)?.lookup(PDFName.of('URI')))
      annot.set(PDFName.of('Contents'), PDFHexString.fromText(uri ? `Link to ${uri}` : 'Link within the document'))
    }
  }
}
