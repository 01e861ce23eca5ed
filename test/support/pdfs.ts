import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { deflateSync } from 'node:zlib'
import {
  drawObject,
  PDFDocument,
  PDFHexString,
  PDFName,
  popGraphicsState,
  pushGraphicsState,
  scale,
  StandardFonts,
} from 'pdf-lib'
import { inScratch } from './scratch.js'

/**
 * Two pages and an outline, as a word processor writes one: "Chapter ✓" (page 1) with "Section"
 * (page 2) under it, then "Elsewhere", which opens no page.
 */
export async function outlinedPdf(): Promise<Buffer> {
  const doc = await PDFDocument.load(await makePdf(2))
  const [p1, p2] = doc.getPages()
  const ctx = doc.context
  const [root, chapter, section, elsewhere] = [ctx.nextRef(), ctx.nextRef(), ctx.nextRef(), ctx.nextRef()]
  const title = (t: string) => PDFHexString.fromText(t)
  ctx.assign(root, ctx.obj({ Type: 'Outlines', First: chapter, Last: elsewhere, Count: 3 }))
  ctx.assign(
    chapter,
    ctx.obj({
      Title: title('Chapter ✓'),
      Parent: root,
      First: section,
      Last: section,
      Count: 1,
      Next: elsewhere,
      Dest: [p1.ref, 'Fit'],
    }),
  )
  ctx.assign(section, ctx.obj({ Title: title('Section'), Parent: chapter, Dest: [p2.ref, 'XYZ', null, null, null] }))
  ctx.assign(elsewhere, ctx.obj({ Title: title('Elsewhere'), Parent: root, Prev: chapter }))
  doc.catalog.set(PDFName.of('Outlines'), root)
  return Buffer.from(await doc.save())
}

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
  const pdf = await makePdf(pages)
  return inScratch('dutil-pdf-', (dir) => {
    writeFileSync(join(dir, 'in.pdf'), pdf)
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
  })
}

/**
 * A one-page PDF whose page points at `count` tiny objects packed into one compressed object
 * stream: a file of a few hundred KB that unpacks to `count` objects (what merge-pdf's per-input
 * object bound refuses). Written by hand: pdf-lib's own writer takes seconds for this many.
 */
export function pdfWithPackedObjects(count: number): Buffer {
  const first = 5
  const numbers = Array.from({ length: count }, (_, i) => first + i)
  const bodies = numbers.map(String)
  let at = 0
  const offsets = bodies.map((b) => {
    const o = at
    at += b.length + 1
    return o
  })
  const index = numbers.map((n, i) => `${n} ${offsets[i]}`).join(' ') + '\n'
  const stream = deflateSync(Buffer.from(index + bodies.join(' ') + ' '))
  const junk = `[${numbers.map((n) => `${n} 0 R`).join(' ')}]`
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Junk 4 0 R >>`,
    junk,
  ]
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n')]
  objects.forEach((o, i) => parts.push(Buffer.from(`${i + 1} 0 obj\n${o}\nendobj\n`)))
  parts.push(
    Buffer.from(
      `${first + count} 0 obj\n<< /Type /ObjStm /N ${count} /First ${index.length} /Filter /FlateDecode /Length ${stream.length} >>\nstream\n`,
    ),
    stream,
    Buffer.from('\nendstream\nendobj\n'),
    Buffer.from(`trailer\n<< /Root 1 0 R /Size ${first + count + 1} >>\n%%EOF\n`),
  )
  return Buffer.concat(parts)
}

/** What qpdf says of a PDF's protection, opened with `password` (none: without one), or why it could not open it. */
export function qpdfEncryption(pdf: Buffer, password?: string): string {
  return inScratch('dutil-encrypted-', (dir) => {
    writeFileSync(join(dir, 'f.pdf'), pdf)
    try {
      return execFileSync(
        'qpdf',
        [...(password === undefined ? [] : [`--password=${password}`]), '--show-encryption', join(dir, 'f.pdf')],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      )
    } catch (err) {
      return String((err as { stderr?: Buffer | string }).stderr ?? err)
    }
  })
}
