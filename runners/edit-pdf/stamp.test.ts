import { decodePDFRawStream, PDFDocument, PDFName, PDFRawStream } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { noisePng } from '../../test/support/office-documents.js'
import { checkEditPdf } from './utility.js'
import { stampPage, stampSourceOf, UnreadableStamp } from './stamp.js'

const MAX_PIXELS = 40_000_000

/** A JPEG's first bytes up to its frame header (SOI, an APP0 segment, SOF0 of `width` × `height`). */
function jpegHead(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0])
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 8, height >> 8, height & 255, width >> 8, width & 255, 3])
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.alloc(16)])
}

/** A PNG header declaring `width` × `height` (its pixel data absent: only the header is read first). */
function pngHead(width: number, height: number): Buffer {
  const png = noisePng(2)
  png.writeUInt32BE(width, 16)
  png.writeUInt32BE(height, 20)
  return png
}

describe('a stamp from a picture or a PDF', () => {
  it('tells a PNG, a JPEG and a PDF by their content, with the picture’s size', () => {
    expect(stampSourceOf(noisePng(40), MAX_PIXELS)).toMatchObject({ kind: 'png', width: 40, height: 40 })
    expect(stampSourceOf(jpegHead(640, 480), MAX_PIXELS)).toMatchObject({ kind: 'jpeg', width: 640, height: 480 })
    expect(stampSourceOf(Buffer.from('%PDF-1.7\n…'), MAX_PIXELS)).toEqual({ kind: 'pdf' })
  })

  it('refuses anything else, and a PNG declaring more pixels than the bound before decoding it', () => {
    expect(stampSourceOf(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), MAX_PIXELS)).toBe(
      'it is not a PNG or JPEG picture or a PDF',
    )
    expect(stampSourceOf(pngHead(100_000, 100_000), MAX_PIXELS)).toBe(
      'the PNG picture is 100000 × 100000 pixels; at most 40 million are taken',
    )
    expect(stampSourceOf(pngHead(0, 10), MAX_PIXELS)).toBe('the PNG picture has no pixels')
    expect(stampSourceOf(Buffer.from([0xff, 0xd8, 0xff, 0xd9, 0, 0, 0, 0, 0, 0, 0, 0]), MAX_PIXELS)).toBe(
      'the JPEG picture has no frame header',
    )
  })

  it('draws a picture on the stamp page at its share of the side, as an image of its own size', async () => {
    const bytes = noisePng(64)
    const source = stampSourceOf(bytes, MAX_PIXELS)
    if (typeof source === 'string' || source.kind === 'pdf') throw new Error(String(source))
    const saved = await stampPage({ image: 'https://example.com/mark.png', scale: 0.25 }, source)
    const page = await PDFDocument.load(saved)
    const images = page.context
      .enumerateIndirectObjects()
      .map(([, o]) => o)
      .filter(
        (o): o is PDFRawStream =>
          o instanceof PDFRawStream && o.dict.get(PDFName.of('Subtype')) === PDFName.of('Image'),
      )
    expect(images).toHaveLength(1)
    expect(images[0]!.dict.get(PDFName.of('Width'))?.toString()).toBe('64')
    // Drawn at 0.25 of the 595 pt side (148.75 pt square), centred: its corner at 223.125.
    const drawn = page.context
      .enumerateIndirectObjects()
      .map(([, o]) => o)
      .filter((o): o is PDFRawStream => o instanceof PDFRawStream && !o.dict.has(PDFName.of('Subtype')))
      .map((o) => Buffer.from(decodePDFRawStream(o).decode()).toString('latin1'))
      .join('\n')
    expect(drawn).toMatch(/1 0 0 1 223\.125 223\.125 cm[^]*148\.75 0 0 148\.75 0 0 cm/)
  })

  it('embeds a JPEG as it is, from a Buffer that shares its memory, and refuses a damaged one as unreadable', async () => {
    const head = jpegHead(2, 2)
    // Node's small Buffers are views into one shared pool: the picture starts past its offset 0.
    const pooled = Buffer.concat([Buffer.alloc(100, 7), head]).subarray(100)
    const source = stampSourceOf(pooled, MAX_PIXELS)
    if (typeof source === 'string' || source.kind === 'pdf') throw new Error(String(source))
    const page = await PDFDocument.load(await stampPage({ image: 'https://example.com/a.jpg' }, source))
    const filters = page.context
      .enumerateIndirectObjects()
      .map(([, o]) => o)
      .filter((o): o is PDFRawStream => o instanceof PDFRawStream && o.dict.has(PDFName.of('Width')))
      .map((o) => o.dict.get(PDFName.of('Filter'))?.toString())
    expect(filters).toEqual(['/DCTDecode'])
    const damaged = stampSourceOf(Buffer.concat([noisePng(2).subarray(0, 33), Buffer.from('broken')]), MAX_PIXELS)
    if (typeof damaged === 'string' || damaged.kind === 'pdf') throw new Error(String(damaged))
    await expect(stampPage({ image: 'https://example.com/a.png' }, damaged)).rejects.toBeInstanceOf(UnreadableStamp)
  })

  it('takes text or an image, one of the two, and each its own options', () => {
    const problems = (stamp: Record<string, unknown>) => checkEditPdf({ url: 'https://example.com/a.pdf', stamp })
    expect(problems({ text: 'PAID' })).toEqual([])
    expect(problems({ image: 'https://example.com/mark.png', scale: 0.3, opacity: 0.2, angle: 30 })).toEqual([])
    expect(problems({})).toEqual([{ path: 'stamp', message: 'takes text or an image, one of the two' }])
    expect(problems({ text: 'PAID', image: 'https://example.com/mark.png' })).toEqual([
      { path: 'stamp', message: 'takes text or an image, one of the two' },
    ])
    expect(problems({ image: 'https://example.com/mark.png', fontSize: 20, color: '#ff0000' })).toEqual([
      { path: 'stamp.fontSize', message: 'applies to a text stamp only' },
      { path: 'stamp.color', message: 'applies to a text stamp only' },
    ])
    expect(problems({ text: 'PAID', scale: 0.5 })).toEqual([
      { path: 'stamp.scale', message: 'applies to a picture only (a text has fontSize)' },
    ])
  })
})
