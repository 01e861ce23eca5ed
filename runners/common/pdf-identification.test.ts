import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFRawStream, PDFString } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { archivalPdf } from './pdf-identification.js'

/** A PDF as Chromium writes a tagged page: a title, a language, a structure tree, a link without words. */
async function chromiumLike(o: { title?: string; lang?: string; tagged?: boolean } = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false })
  const page = doc.addPage([300, 300])
  if (o.title !== undefined) doc.setTitle(o.title)
  doc.setCreator('Chromium')
  doc.setProducer('Skia/PDF')
  doc.setCreationDate(new Date('2026-11-30T10:00:00Z'))
  doc.setModificationDate(new Date('2026-11-30T10:00:00Z'))
  if (o.lang !== undefined) doc.catalog.set(PDFName.of('Lang'), PDFString.of(o.lang))
  if (o.tagged !== false) {
    doc.catalog.set(PDFName.of('StructTreeRoot'), doc.context.register(doc.context.obj({ Type: 'StructTreeRoot' })))
    doc.catalog.set(PDFName.of('MarkInfo'), doc.context.obj({ Marked: true }))
  }
  const link = doc.context.register(
    doc.context.obj({
      Type: 'Annot',
      Subtype: 'Link',
      Rect: [10, 10, 100, 30],
      A: { S: 'URI', URI: PDFString.of('https://example.com/pay') },
    }),
  )
  page.node.set(PDFName.of('Annots'), doc.context.obj([link]))
  return doc.save()
}

const xmpOf = (doc: PDFDocument) =>
  Buffer.from((doc.catalog.lookup(PDFName.of('Metadata')) as PDFRawStream).contents).toString('utf8')

const refusal = {
  field: 'pdfua',
  title: 'it has no title.',
  language: 'it declares no language.',
  structure: 'it has no structure.',
}

describe('archivalPdf', () => {
  it('adds what PDF/A and PDF/UA ask and Chromium lacks: metadata, an output intent, an identifier, described links', async () => {
    const out = await PDFDocument.load(
      await archivalPdf(await chromiumLike({ title: 'Rechnung – Zürich', lang: 'de' }), {
        pdfa: 'PDF/A-3b',
        pdfua: true,
        refusal,
      }),
      { updateMetadata: false },
    )
    const xmp = xmpOf(out)
    expect(xmp).toContain('<pdfaid:part>3</pdfaid:part>')
    expect(xmp).toContain('<pdfuaid:part>1</pdfuaid:part>')
    expect(xmp).toContain('<pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix>')
    expect(xmp).toContain('Rechnung – Zürich')
    expect(xmp).toContain('<xmp:CreateDate>2026-11-30T10:00:00Z</xmp:CreateDate>')
    expect(xmp).toContain('<xmp:CreatorTool>Chromium</xmp:CreatorTool>')
    const intents = out.catalog.lookup(PDFName.of('OutputIntents'), PDFArray)
    expect(intents.lookup(0, PDFDict).get(PDFName.of('S'))).toBe(PDFName.of('GTS_PDFA1'))
    expect(out.context.trailerInfo.ID).toBeDefined()
    const viewer = out.catalog.lookup(PDFName.of('ViewerPreferences'), PDFDict)
    expect(viewer.get(PDFName.of('DisplayDocTitle'))?.toString()).toBe('true')
    const annot = out.getPage(0).node.lookup(PDFName.of('Annots'), PDFArray).lookup(0, PDFDict)
    expect((annot.lookup(PDFName.of('Contents')) as PDFHexString).decodeText()).toBe('Link to https://example.com/pay')
  })

  it('makes PDF/A alone without PDF/UA marks, and refuses PDF/UA of a page without a title, a language or tags', async () => {
    const archival = await PDFDocument.load(await archivalPdf(await chromiumLike(), { pdfa: 'PDF/A-2b', refusal }), {
      updateMetadata: false,
    })
    expect(xmpOf(archival)).not.toContain('pdfuaid')
    expect(archival.catalog.has(PDFName.of('ViewerPreferences'))).toBe(false)
    await expect(archivalPdf(await chromiumLike({ lang: 'en' }), { pdfua: true, refusal })).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: 'pdfua: it has no title.',
    })
    await expect(archivalPdf(await chromiumLike({ title: 'T' }), { pdfua: true, refusal })).rejects.toMatchObject({
      message: 'pdfua: it declares no language.',
    })
    await expect(
      archivalPdf(await chromiumLike({ title: 'T', lang: 'en', tagged: false }), { pdfua: true, refusal }),
    ).rejects.toMatchObject({ message: 'pdfua: it has no structure.' })
  })
})
