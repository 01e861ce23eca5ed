import { degrees, PDFDocument, type PDFImage, rgb, StandardFonts } from 'pdf-lib'

export interface StampOptions {
  /** The stamp's text; or `image`, a picture or a PDF (one of the two). */
  text?: string
  /** Where the picture or the PDF is (a URL, or an upload's s3:// URL). */
  image?: string
  fontSize?: number
  angle?: number
  color?: string
  opacity?: number
  /** A picture's size: this share of the page's shorter side (its longer side). */
  scale?: number
}

/** A picture its header named but pdf-lib cannot embed (damaged): the job's refusal, not a crash. */
export class UnreadableStamp extends Error {}

/** What a stamp's `image` turned out to be, by its content. */
export type StampSource = { kind: 'png' | 'jpeg'; bytes: Buffer; width: number; height: number } | { kind: 'pdf' }

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/**
 * A stamp's picture or PDF told by its content (pure): a PNG (its size from its header, bounded
 * before anything decodes it: a small file of one colour can declare billions of pixels) or a
 * JPEG (embedded as it is, never decoded), or a PDF; anything else is refused. Returns the
 * refusal's text in place of a source.
 */
export function stampSourceOf(bytes: Buffer, maxPixels: number): StampSource | string {
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return { kind: 'pdf' }
  if (bytes.length >= 24 && bytes.subarray(0, 8).equals(PNG_MAGIC) && bytes.toString('latin1', 12, 16) === 'IHDR') {
    const width = bytes.readUInt32BE(16)
    const height = bytes.readUInt32BE(20)
    if (width === 0 || height === 0) return 'the PNG picture has no pixels'
    if (width * height > maxPixels)
      return `the PNG picture is ${width} × ${height} pixels; at most ${(maxPixels / 1e6).toFixed(0)} million are taken`
    return { kind: 'png', bytes, width, height }
  }
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    const size = jpegSize(bytes)
    if (!size) return 'the JPEG picture has no frame header'
    return { kind: 'jpeg', bytes, ...size }
  }
  return 'it is not a PNG or JPEG picture or a PDF'
}

/** A JPEG's size from its first frame header (SOF0–SOF15 but DHT, JPG and DAC), or null. */
function jpegSize(bytes: Buffer): { width: number; height: number } | null {
  let at = 2
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return null
    const marker = bytes[at + 1]!
    if (marker === 0xff) {
      at++
      continue
    }
    const length = bytes.readUInt16BE(at + 2)
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const height = bytes.readUInt16BE(at + 5)
      const width = bytes.readUInt16BE(at + 7)
      return width > 0 && height > 0 ? { width, height } : null
    }
    at += 2 + length
  }
  return null
}

/**
 * The side of a stamp's page: square, so qpdf, which fits an overlay page into each page it
 * stamps (scaled to the shorter side, centred), lays the text out alike on portrait and landscape
 * pages; 595 pt is A4's width, so fontSize is in points on an A4 page.
 */
export const STAMP_SIDE = 595

/** A one-page PDF holding the stamp: its text, or its picture, centred and turned about the page's centre. */
export async function stampPage(
  o: StampOptions,
  picture?: Extract<StampSource, { bytes: Buffer }>,
): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const page = doc.addPage([STAMP_SIDE, STAMP_SIDE])
  const a = ((o.angle ?? 0) * Math.PI) / 180
  /** The corner to draw from so that a box of this size, turned with the stamp, is centred. */
  const corner = (width: number, height: number) => ({
    x: STAMP_SIDE / 2 - (width / 2) * Math.cos(a) + (height / 2) * Math.sin(a),
    y: STAMP_SIDE / 2 - (width / 2) * Math.sin(a) - (height / 2) * Math.cos(a),
  })
  if (picture) {
    // pdf-lib reads the bytes' whole ArrayBuffer: a copy of their own (a small Buffer shares Node's pool).
    const own = new Uint8Array(picture.bytes)
    let image: PDFImage
    try {
      image = picture.kind === 'png' ? await doc.embedPng(own) : await doc.embedJpg(own)
    } catch {
      throw new UnreadableStamp(`the ${picture.kind === 'png' ? 'PNG' : 'JPEG'} picture cannot be read`)
    }
    // Its longer side is `scale` of the page's shorter side.
    const fit = ((o.scale ?? 0.5) * STAMP_SIDE) / Math.max(picture.width, picture.height)
    const width = picture.width * fit
    const height = picture.height * fit
    page.drawImage(image, {
      ...corner(width, height),
      width,
      height,
      opacity: o.opacity ?? 0.5,
      rotate: degrees(o.angle ?? 0),
    })
    return doc.save({ useObjectStreams: false })
  }
  const font = await doc.embedFont(StandardFonts.HelveticaBold)
  const text = o.text ?? ''
  const size = o.fontSize ?? 48
  const width = font.widthOfTextAtSize(text, size)
  const height = font.heightAtSize(size, { descender: false })
  // The text's own centre, turned with it, lands on the page's centre.
  const hex = (o.color ?? '#808080').slice(1)
  const channel = (i: number) => parseInt(hex.slice(i, i + 2), 16) / 255
  page.drawText(text, {
    ...corner(width, height),
    size,
    font,
    color: rgb(channel(0), channel(2), channel(4)),
    opacity: o.opacity ?? 0.5,
    rotate: degrees(o.angle ?? 0),
  })
  return doc.save({ useObjectStreams: false })
}
