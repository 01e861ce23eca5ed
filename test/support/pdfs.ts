import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PDFDocument, StandardFonts } from 'pdf-lib'

/** A PDF with `pages` pages, each saying its number. */
export async function makePdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  for (let i = 1; i <= pages; i++) doc.addPage([300, 400]).drawText(`page ${i}`, { x: 50, y: 200, size: 24, font })
  return Buffer.from(await doc.save())
}

/** The same, encrypted with a user password by qpdf. */
export async function makeEncryptedPdf(pages: number): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'dutil-pdf-'))
  writeFileSync(join(dir, 'in.pdf'), await makePdf(pages))
  execFileSync('qpdf', ['--encrypt', 'secret-user', 'secret-owner', '256', '--', join(dir, 'in.pdf'), join(dir, 'out.pdf')])
  return readFileSync(join(dir, 'out.pdf'))
}
