import { degrees, PDFDocument, rgb, StandardFonts } from 'pdf-lib'

export interface StampOptions {
  text: string
  fontSize?: number
  angle?: number
  color?: string
  opacity?: number
}

/**
 * The side of a stamp's page: square, so qpdf, which fits an overlay page into each page it
 * stamps (scaled to the shorter side, centred), lays the text out alike on portrait and landscape
 * pages; 595 pt is A4's width, so fontSize is in points on an A4 page.
 */
export const STAMP_SIDE = 595

/** A one-page PDF holding the stamp's text, centred and turned about the page's centre. */
export async function stampPage(o: StampOptions): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.HelveticaBold)
  const page = doc.addPage([STAMP_SIDE, STAMP_SIDE])
  const size = o.fontSize ?? 48
  const width = font.widthOfTextAtSize(o.text, size)
  const height = font.heightAtSize(size, { descender: false })
  // The text's own centre, turned with it, lands on the page's centre.
  const a = ((o.angle ?? 0) * Math.PI) / 180
  const x = STAMP_SIDE / 2 - (width / 2) * Math.cos(a) + (height / 2) * Math.sin(a)
  const y = STAMP_SIDE / 2 - (width / 2) * Math.sin(a) - (height / 2) * Math.cos(a)
  const hex = (o.color ?? '#808080').slice(1)
  const channel = (i: number) => parseInt(hex.slice(i, i + 2), 16) / 255
  page.drawText(o.text, {
    x,
    y,
    size,
    font,
    color: rgb(channel(0), channel(2), channel(4)),
    opacity: o.opacity ?? 0.5,
    rotate: degrees(o.angle ?? 0),
  })
  return doc.save({ useObjectStreams: false })
}
