import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { drawObject, PDFDocument, PDFName, popGraphicsState, pushGraphicsState, scale, StandardFonts } from 'pdf-lib'

/** A PDF with `pages` pages, each saying its number. */
export async function makePdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  for (let i = 1; i <= pages; i++) doc.addPage([300, 400]).drawText(`page ${i}`, { x: 50, y: 200, size: 24, font })
  return Buffer.from(await doc.save())
}

/**
 * A PDF whose pages each draw their own uncompressed image of `imageBytes` random bytes (RGB,
 * 500 px wide): a scan-like document, large for its page count.
 */
export async function makeHeavyPdf(pages: number, imageBytes: number): Promise<Buffer> {
  const doc = await PDFDocument.create()
  const width = 500
  const height = Math.floor(imageBytes / (width * 3))
  for (let i = 1; i <= pages; i++) {
    const image = doc.context.register(
      doc.context.stream(randomBytes(width * height * 3), {
        Type: 'XObject',
        Subtype: 'Image',
        Width: width,
        Height: height,
        ColorSpace: 'DeviceRGB',
        BitsPerComponent: 8,
      }),
    )
    const page = doc.addPage([width, height])
    page.node.setXObject(PDFName.of('Scan'), image)
    page.pushOperators(pushGraphicsState(), scale(width, height), drawObject('Scan'), popGraphicsState())
  }
  return Buffer.from(await doc.save({ useObjectStreams: false }))
}

/** The same, encrypted with a user password by qpdf. */
export async function makeEncryptedPdf(pages: number): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'dutil-pdf-'))
  writeFileSync(join(dir, 'in.pdf'), await makePdf(pages))
  execFileSync('qpdf', [
    '--encrypt',
    'secret-user',
    'secret-owner',
    '256',
    '--',
    join(dir, 'in.pdf'),
    join(dir, 'out.pdf'),
  ])
  return readFileSync(join(dir, 'out.pdf'))
}
