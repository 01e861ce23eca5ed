import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { degrees, PDFDocument } from 'pdf-lib'
import { describe, expect, inject, it } from 'vitest'
import { api, download } from './helpers/api.js'
import { jobInputs } from './helpers/job-inputs.js'
import { jobOutputs } from './helpers/storage.js'
import { hostile } from '../support/fixtures.js'
import { makePdf, outlinedPdf } from '../support/pdfs.js'
import { noisePng } from '../support/office-documents.js'
import { createKey } from './helpers/keys.js'
import { verapdf } from '../support/verapdf.js'
import { fileScratch } from '../support/file-scratch.js'

const inputs = jobInputs()
const { files } = inputs

/** A 3-page A4 PDF with a filled text field on page 1, titled "Original", page 3 already turned 90°. */
async function formPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create()
  for (let i = 1; i <= 3; i++) doc.addPage([595, 842]).drawText(`Page ${i} body`, { x: 50, y: 780, size: 20 })
  doc.getPage(2).setRotation(degrees(90))
  const field = doc.getForm().createTextField('name')
  field.setText('Ada Lovelace')
  field.addToPage(doc.getPage(0), { x: 50, y: 600, width: 220, height: 30 })
  doc.setTitle('Original')
  doc.setCreator('a test')
  return Buffer.from(await doc.save())
}

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratch = fileScratch('dutil-edit-')

/** Runs a command-line tool on the PDF's bytes (pdftotext, qpdf). */
function onPdf(bytes: Buffer, tool: string, args: (path: string) => string[]): string {
  const path = join(mkdtempSync(join(scratch, 'f-')), 'edited.pdf')
  writeFileSync(path, bytes)
  return execFileSync(tool, args(path), { encoding: 'utf8' })
}
/** `bytes` in a file of its own named `name`. */
function onDisk(bytes: Buffer, name: string): string {
  const path = join(mkdtempSync(join(scratch, 'f-')), name)
  writeFileSync(path, bytes)
  return path
}
/** Runs a command (its first word) that writes a PDF from the PDF's bytes, and answers what it wrote. */
function onPdfFile(bytes: Buffer, command: (path: string, out: string) => string[]): Buffer {
  const path = onDisk(bytes, 'source.pdf')
  const out = `${path}.out.pdf`
  const [tool, ...args] = command(path, out)
  execFileSync(tool, args)
  return readFileSync(out)
}
/** Runs pdftoppm on the PDF's bytes, and returns the picture it wrote. */
function onPdfBytes(bytes: Buffer, args: (path: string, out: string) => string[], extension: string): Buffer {
  const dir = mkdtempSync(join(scratch, 'f-'))
  const path = join(dir, 'source.pdf')
  writeFileSync(path, bytes)
  execFileSync('pdftoppm', args(path, join(dir, 'out')))
  return readFileSync(join(dir, `out.${extension}`))
}
/** A page's text in the order its content draws it (pdftotext -raw), without white space: text drawn at an angle comes in pieces. */
const textOfPage = (bytes: Buffer, page: number) =>
  onPdf(bytes, 'pdftotext', (p) => ['-raw', '-f', String(page), '-l', String(page), p, '-']).replace(/\s+/g, '')

describe('edit-pdf through the whole platform', () => {
  it('flattens the form, turns a page, watermarks pages and writes document information in one run', async () => {
    const url = files.add('contract.pdf', await formPdf())
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: {
        input: {
          url,
          flatten: true,
          rotate: { angle: 90, pages: '2' },
          stamp: { text: 'ENTWURF – vertraulich', layer: 'under', pages: '1-2', angle: 45, color: '#cc0000' },
          info: { author: 'Ada', keywords: ['contract', 'draft'] },
        },
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result).toMatchObject({
      pageCount: 3,
      // The fields given replace the document's own; the others stay.
      title: 'Original',
      author: 'Ada',
      keywords: 'contract, draft',
      creator: 'a test',
    })
    const [file] = res.body.result.files
    expect(file).toMatchObject({ name: 'contract.pdf', contentType: 'application/pdf' })
    const bytes = (await download(file.url)).bytes
    const doc = await PDFDocument.load(bytes)
    // The form is gone, what it showed stays in the page.
    expect(doc.getForm().getFields()).toEqual([])
    expect(textOfPage(bytes, 1)).toContain('AdaLovelace')
    // Page 2 turned; page 3 keeps its own turn.
    expect(doc.getPages().map((p) => p.getRotation().angle)).toEqual([0, 90, 90])
    // The watermark on the pages asked for, not on the others.
    expect(textOfPage(bytes, 1)).toContain('ENTWURF–vertraulich')
    expect(textOfPage(bytes, 2)).toContain('ENTWURF–vertraulich')
    expect(textOfPage(bytes, 3)).not.toContain('ENTWURF')
    expect(doc.getTitle()).toBe('Original')
    expect(doc.getAuthor()).toBe('Ada')
    expect(doc.getModificationDate()!.getTime()).toBeGreaterThan(Date.parse(res.body.createdAt) - 2000)
    // qpdf finds nothing wrong with what it wrote.
    expect(onPdf(bytes, 'qpdf', (p) => ['--check', p])).toContain('No syntax or stream encoding errors')
  })

  it('compresses and linearizes: the same pages, "fast web view"', async () => {
    const url = files.add('report.pdf', await makePdf(4))
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: { input: { url, compress: true, linearize: true } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const bytes = (await download(res.body.result.files[0].url)).bytes
    expect(res.body.result.pageCount).toBe(4)
    expect((await PDFDocument.load(bytes)).getPageCount()).toBe(4)
    expect(onPdf(bytes, 'pdfinfo', (p) => [p])).toMatch(/Optimized:\s+yes/)
    expect(onPdf(bytes, 'qpdf', (p) => ['--check-linearization', p])).toContain('no linearization errors')
  })

  it('refuses a request naming no edit, a stamp it cannot draw and an angle it does not take, before any job', async () => {
    const url = files.add('plain.pdf', await makePdf(1))
    for (const [input, path] of [
      [{ url }, 'input'],
      [{ url, stamp: { text: '草稿' } }, 'input.stamp.text'],
      [{ url, rotate: { angle: 45 } }, 'input.rotate.angle'],
      [{ url, stamp: { text: 'X', opacity: 0 } }, 'input.stamp.opacity'],
    ] as const) {
      const res = await api('POST', '/v1/utilities/edit-pdf', { key: inputs.key, body: { input } })
      expect(res.status, JSON.stringify(input)).toBe(400)
      expect(res.body.error.code).toBe('invalid_request')
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path)
    }
  })

  it.each([
    ['encrypted.pdf', 'protected by a password'],
    ['truncated.pdf', 'not a PDF qpdf can read'],
    ['not-a-pdf.pdf', 'not a PDF qpdf can read'],
  ])('given %s, the run fails as upstream_rejected (%s), with no output', async (fixture, why) => {
    const url = files.add(`edit-${fixture}`, hostile(fixture))
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: { input: { url, flatten: true } },
    })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ status: 'failed', result: null, error: { code: 'upstream_rejected' } })
    expect(res.body.error.message).toContain(why)
    expect(res.body.error.message).not.toContain('/tmp')
    expect(await jobOutputs(res.body)).toEqual([])
  })

  it("writes bookmarks in place of the PDF's own, which pdf-info reads back; none removes them", async () => {
    const url = files.add('outlined.pdf', await outlinedPdf())
    const bookmarks = [
      { title: 'Introduction', page: 1 },
      {
        title: 'Chapter ✓ one',
        page: 2,
        children: [{ title: 'A section', page: 2, children: [{ title: 'Deeper', page: 1 }] }],
      },
    ]
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: { input: { url, bookmarks, info: { title: 'Outlined' } } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result).toMatchObject({ bookmarkCount: 4, title: 'Outlined' })
    const s3 = (key: string) => `s3://${inject('storage').bucket}/${key}`
    const read = await api('POST', '/v1/utilities/pdf-info', {
      key: inputs.key,
      body: { input: { url: s3(res.body.result.files[0].key), bookmarks: true } },
    })
    expect(read.status, JSON.stringify(read.body)).toBe(200)
    expect(read.body.result).toMatchObject({ bookmarkCount: 4, title: 'Outlined', pageCount: 2 })
    expect(JSON.parse((await download(read.body.result.files[0].url)).bytes.toString('utf8'))).toEqual(bookmarks)
    // None: the outline goes.
    const cleared = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: { input: { url, bookmarks: [] } },
    })
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200)
    const none = await api('POST', '/v1/utilities/pdf-info', {
      key: inputs.key,
      body: { input: { url: s3(cleared.body.result.files[0].key), bookmarks: true } },
    })
    expect(none.body.result).toMatchObject({ bookmarkCount: 0 })
    // A page past the end is the input's fault, named.
    const past = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: { input: { url, bookmarks: [{ title: 'Nowhere', page: 9 }] } },
    })
    expect(past.status).toBe(422)
    expect(past.body.error.message).toBe("bookmarks: page 9 is past the PDF's last page (it has 2).")
  })

  it('fails naming the pages when they go past the end of the document', async () => {
    const url = files.add('two.pdf', await makePdf(2))
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: { input: { url, rotate: { angle: 180, pages: '2-3' } } },
    })
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({ code: 'upstream_rejected' })
    expect(res.body.error.message).toContain('has 2 pages; the pages asked for (2-3) go past its end')
    expect(await jobOutputs(res.body)).toEqual([])
  })

  it('takes the PDF and its edits in one multipart call and answers the edited PDF itself', async () => {
    const body = new FormData()
    body.append('file', new Blob([await formPdf()]), 'invoice.pdf')
    body.append('input', JSON.stringify({ stamp: { text: 'PAID', fontSize: 96, color: '#008000' } }))
    const res = await fetch(`${inject('gatewayUrl')}/v1/utilities/edit-pdf`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${inputs.key}`, Accept: 'application/pdf' },
      body,
    })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    expect(res.headers.get('content-disposition')).toContain('filename="invoice.pdf"')
    const bytes = Buffer.from(await res.arrayBuffer())
    for (const page of [1, 2, 3]) expect(textOfPage(bytes, page)).toContain('PAID')
    // Not flattened: the form stays a form.
    expect((await PDFDocument.load(bytes)).getForm().getFields()).toHaveLength(1)
  })

  it('stamps a picture (PNG or JPEG) or a PDF page across the pages, from a URL or a part of the request', async () => {
    const imagesOf = (bytes: Buffer) =>
      onPdf(bytes, 'pdfimages', (p) => ['-list', p])
        .split('\n')
        .slice(2)
        .filter((l) => l.trim())
        .map((l) => {
          const [page, , , width, height, , , , enc] = l.trim().split(/\s+/)
          return { page: Number(page), width: Number(width), height: Number(height), enc }
        })
    const run = (input: Record<string, unknown>) =>
      api('POST', '/v1/utilities/edit-pdf', { key: inputs.key, body: { input } })
    const url = files.add('to-stamp.pdf', await formPdf())
    // A PNG picture on pages 1 and 3: one image, drawn on those pages only.
    const png = await run({ url, stamp: { image: files.add('mark.png', noisePng(48)), pages: '1,3', scale: 0.3 } })
    expect(png.status, JSON.stringify(png.body)).toBe(200)
    const pngPdf = Buffer.from((await download(png.body.result.files[0].url)).bytes)
    expect(imagesOf(pngPdf).map((i) => [i.page, i.width, i.height])).toEqual([
      [1, 48, 48],
      [3, 48, 48],
    ])
    // A JPEG, kept as JPEG (embedded as it is, never decoded), turned and faint.
    const jpeg = onPdfBytes(await makePdf(1), (p, out) => ['-jpeg', '-r', '20', '-singlefile', p, out], 'jpg')
    const jpg = await run({ url, stamp: { image: files.add('mark.jpg', jpeg), angle: 30, opacity: 0.2 } })
    expect(jpg.status, JSON.stringify(jpg.body)).toBe(200)
    const jpgImages = imagesOf(Buffer.from((await download(jpg.body.result.files[0].url)).bytes))
    expect(jpgImages).toHaveLength(3)
    expect(jpgImages.every((i) => i.enc === 'jpeg')).toBe(true)
    // A PDF: its first page laid on every page, its text with the page's own.
    const sealPdf = await PDFDocument.create()
    sealPdf.addPage([300, 100]).drawText('APPROVED 2026', { x: 20, y: 40, size: 28 })
    const stampUrl = files.add('approved.pdf', Buffer.from(await sealPdf.save()))
    const pdf = await run({ url, stamp: { image: stampUrl, layer: 'under' } })
    expect(pdf.status, JSON.stringify(pdf.body)).toBe(200)
    const pdfBytes = Buffer.from((await download(pdf.body.result.files[0].url)).bytes)
    for (const page of [1, 2, 3]) {
      expect(textOfPage(pdfBytes, page)).toContain('APPROVED2026')
      expect(textOfPage(pdfBytes, page)).toContain(`Page${page}body`)
    }
    // What is no picture or PDF, and a PDF asked to turn, fail naming stamp.image; nothing is stored.
    const svg = await run({
      url,
      stamp: { image: files.add('mark.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')) },
    })
    expect(svg.status).toBe(422)
    expect(svg.body.error).toMatchObject({
      code: 'upstream_rejected',
      message: 'stamp.image: it is not a PNG or JPEG picture or a PDF.',
    })
    expect(await jobOutputs(svg.body)).toEqual([])
    const turned = await run({ url, stamp: { image: stampUrl, angle: 45 } })
    expect(turned.status).toBe(422)
    expect(turned.body.error.message).toMatch(/^stamp\.image: a PDF is laid as its first page is drawn/)
    // The picture as a part of a one-call request, beside the PDF.
    const body = new FormData()
    body.append('file', new Blob([await formPdf()]), 'invoice.pdf')
    body.append('stamp', new Blob([noisePng(32)]), 'logo.png')
    body.append('input', JSON.stringify({ stamp: { scale: 0.2, pages: '2' } }))
    const res = await fetch(`${inject('gatewayUrl')}/v1/utilities/edit-pdf`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${inputs.key}`, Accept: 'application/pdf' },
      body,
    })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(imagesOf(Buffer.from(await res.arrayBuffer())).map((i) => [i.page, i.width])).toEqual([[2, 32]])
  })

  it("refuses another key's upload as a stamp at once, as if it did not exist", async () => {
    const other = await createKey({ name: 'stamp-other' })
    const uploaded = await fetch(`${inject('gatewayUrl')}/v1/files?name=logo.png`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${other.key}`, 'Content-Type': 'image/png' },
      body: noisePng(16),
    })
    expect(uploaded.status, await uploaded.clone().text()).toBe(201)
    const up = { body: (await uploaded.json()) as { url: string } }
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: { input: { url: files.add('mine.pdf', await makePdf(1)), stamp: { image: up.body.url } } },
    })
    expect(res.status).toBe(404)
    expect(res.body.error.message).toContain('input.stamp.image')
  })

  it('embeds files, named as given or after their URL, which qpdf lists and gives back byte for byte', async () => {
    const xml = Buffer.from('<?xml version="1.0"?><invoice number="4711"/>')
    const csv = Buffer.from('item,amount\nwidget,2\n')
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: {
        input: {
          url: files.add('with-files.pdf', await makePdf(1)),
          attachments: [
            { url: files.add('data.xml', xml), name: 'factur-x.xml', description: 'The invoice as data' },
            { url: files.add('lines.csv', csv) },
          ],
        },
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result.attachmentCount).toBe(2)
    const pdf = Buffer.from((await download(res.body.result.files[0].url)).bytes)
    const listed = onPdf(pdf, 'qpdf', (p) => ['--list-attachments', '--verbose', p])
    expect(listed).toContain('factur-x.xml')
    expect(listed).toContain('The invoice as data')
    expect(listed).toContain('lines.csv')
    const shown = (name: string) => {
      const path = join(mkdtempSync(join(scratch, 'f-')), 'with.pdf')
      writeFileSync(path, pdf)
      return execFileSync('qpdf', [`--show-attachment=${name}`, path])
    }
    expect(shown('factur-x.xml').equals(xml)).toBe(true)
    expect(shown('lines.csv').equals(csv)).toBe(true)
    // Two files of one name are refused before any job.
    const twice = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: {
        input: {
          url: files.add('twice.pdf', await makePdf(1)),
          attachments: [
            { url: files.add('a.txt', Buffer.from('a')), name: 'same.txt' },
            { url: files.add('b.txt', Buffer.from('b')), name: 'same.txt' },
          ],
        },
      },
    })
    expect(twice.status).toBe(400)
    expect(twice.body.error.details).toContainEqual({ path: 'input.attachments', message: 'names one file twice' })
    // As parts of a one-call request, each named by its part's file name.
    const body = new FormData()
    body.append('file', new Blob([await makePdf(1)]), 'report.pdf')
    body.append('attachments', new Blob([csv]), 'figures.csv')
    body.append('input', JSON.stringify({}))
    const one = await fetch(`${inject('gatewayUrl')}/v1/utilities/edit-pdf`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${inputs.key}`, Accept: 'application/pdf' },
      body,
    })
    expect(one.status, await one.clone().text()).toBe(200)
    expect(onPdf(Buffer.from(await one.arrayBuffer()), 'qpdf', (p) => ['--list-attachments', p])).toContain(
      'figures.csv',
    )
  })

  it('makes an archival PDF (PDF/A-2b) that veraPDF passes, its information kept in any script, Info and XMP alike', async () => {
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: {
        input: {
          url: files.add('form.pdf', await formPdf()),
          pdfa: 'PDF/A-2b',
          info: { title: 'Отчёт – 報告 2026', keywords: ['archive'] },
        },
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result).toMatchObject({
      pageCount: 3,
      title: 'Отчёт – 報告 2026',
      keywords: 'archive',
      creator: 'a test',
    })
    const pdf = Buffer.from((await download(res.body.result.files[0].url)).bytes)
    expect(await verapdf(pdf)).toEqual({ compliant: true, level: '2b', failed: [] })
    expect(onPdf(pdf, 'pdfinfo', (p) => [p])).toMatch(/Title:\s+Отчёт – 報告 2026/)
    const xmp = onPdf(pdf, 'pdfinfo', (p) => ['-meta', p])
    expect(xmp).toContain('<pdfaid:part>2</pdfaid:part>')
    expect(xmp).toContain('Отчёт – 報告 2026')
    // The pages are the same pages, their text still text.
    expect(textOfPage(pdf, 1)).toContain('Page1body')
    expect(textOfPage(pdf, 1)).toContain('AdaLovelace')
  })

  it("makes html-pdf's PDF of a page without transparency a PDF/A-1b that veraPDF passes, its text still text in embedded fonts", async () => {
    const made = await api('POST', '/v1/utilities/html-pdf', {
      key: inputs.key,
      body: {
        input: {
          html: '<!doctype html><html lang="en"><title>Invoice</title><h1>Invoice 42</h1><p>Total: 12.00 CHF</p></html>',
        },
      },
    })
    expect(made.status, JSON.stringify(made.body)).toBe(200)
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: { input: { url: `s3://${inject('storage').bucket}/${made.body.result.files[0].key}`, pdfa: 'PDF/A-1b' } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const pdf = Buffer.from((await download(res.body.result.files[0].url)).bytes)
    expect(await verapdf(pdf)).toEqual({ compliant: true, level: '1b', failed: [] })
    expect(textOfPage(pdf, 1)).toContain('Total:12.00CHF')
    // No page drawn as a picture: its fonts are embedded (pdffonts' "emb" column), no image on it.
    const fonts = onPdf(pdf, 'pdffonts', (p) => [p])
      .trim()
      .split('\n')
      .slice(2)
    expect(fonts.length).toBeGreaterThan(0)
    for (const row of fonts) expect(row, row).toMatch(/ yes +(yes|no) +(yes|no) +\d+ +\d+$/)
    expect(
      onPdf(pdf, 'pdfimages', (p) => ['-list', p])
        .trim()
        .split('\n')
        .slice(2),
    ).toEqual([])
  })

  it('makes a tagged PDF accessible (PDF/UA-1) that veraPDF passes, titled, turned and linearized; refuses an untagged one', async () => {
    // A tagged PDF as html-pdf makes it, then edited by its s3:// name.
    const made = await api('POST', '/v1/utilities/html-pdf', {
      key: inputs.key,
      body: {
        input: {
          html: '<!doctype html><html lang="en"><title>Draft</title><h1>Minutes</h1><p><a href="https://example.com/a">Agenda</a></p></html>',
          pdfOptions: { tagged: true },
        },
      },
    })
    expect(made.status, JSON.stringify(made.body)).toBe(200)
    const url = `s3://${inject('storage').bucket}/${made.body.result.files[0].key}`
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: {
        input: { url, pdfua: true, info: { title: 'Minutes of 30 November' }, rotate: { angle: 90 }, linearize: true },
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result.title).toBe('Minutes of 30 November')
    const pdf = Buffer.from((await download(res.body.result.files[0].url)).bytes)
    expect(await verapdf(pdf, 'ua1')).toEqual({ compliant: true, level: 'ua1', failed: [] })
    expect(onPdf(pdf, 'pdfinfo', (p) => [p])).toMatch(/Title:\s+Minutes of 30 November/)
    expect(onPdf(pdf, 'pdfinfo', (p) => [p])).toMatch(/Optimized:\s+yes/)
    expect((await PDFDocument.load(pdf)).getPage(0).getRotation().angle).toBe(90)
    const untagged = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: { input: { url: files.add('untagged.pdf', await makePdf(1)), pdfua: true } },
    })
    expect(untagged.status).toBe(422)
    expect(untagged.body.error).toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringMatching(/^pdfua: the PDF/),
    })
    expect(await jobOutputs(untagged.body)).toEqual([])
  })

  it('makes a PDF/A-1b of an edited PDF: stamped, compressed and linearized, its embedded files left out', async () => {
    const withFile = onPdfFile(await makePdf(2), (p, out) => [
      'qpdf',
      p,
      '--add-attachment',
      onDisk(Buffer.from('x'), 'note.txt'),
      '--',
      out,
    ])
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key: inputs.key,
      body: {
        input: {
          url: files.add('attached.pdf', withFile),
          pdfa: 'PDF/A-1b',
          stamp: { text: 'ARCHIVED', opacity: 1 },
          compress: true,
          linearize: true,
        },
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const pdf = Buffer.from((await download(res.body.result.files[0].url)).bytes)
    expect(await verapdf(pdf)).toEqual({ compliant: true, level: '1b', failed: [] })
    expect(onPdf(pdf, 'qpdf', (p) => ['--list-attachments', p])).not.toContain('note.txt')
    expect(onPdf(pdf, 'pdfinfo', (p) => [p])).toMatch(/Optimized:\s+yes/)
    expect(textOfPage(pdf, 2)).toContain('ARCHIVED')
  })

  it('shrinks pictures to a resolution and a JPEG quality, and leaves them as they are otherwise', async () => {
    const doc = await PDFDocument.create()
    const picture = await doc.embedPng(noisePng(900))
    // 900 px across 216 pt (3 in): 300 dpi.
    doc.addPage([595, 842]).drawImage(picture, { x: 50, y: 500, width: 216, height: 216 })
    const source = Buffer.from(await doc.save())
    const run = async (input: object) => {
      const res = await api('POST', '/v1/utilities/edit-pdf', {
        key: inputs.key,
        body: { input: { url: files.add('picture.pdf', source), ...input } },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const pdf = Buffer.from((await download(res.body.result.files[0].url)).bytes)
      const [line] = onPdf(pdf, 'pdfimages', (p) => ['-list', p])
        .split('\n')
        .slice(2)
      const [, , , width, , , , , enc, , , , ppi] = line.trim().split(/\s+/)
      return { size: pdf.length, width: Number(width), enc, ppi: Number(ppi) }
    }
    const original = await run({ pdfa: 'PDF/A-2b' })
    expect(original).toMatchObject({ width: 900, enc: 'image', ppi: 300 })
    const smaller = await run({ maxImageResolution: 75 })
    expect(smaller.width).toBeLessThanOrEqual(226)
    expect(smaller.ppi).toBeLessThanOrEqual(76)
    expect(smaller.size).toBeLessThan(original.size / 8)
    const jpeg = await run({ imageQuality: 30 })
    expect(jpeg).toMatchObject({ width: 900, enc: 'jpeg' })
    expect(jpeg.size).toBeLessThan(original.size / 2)
  })

  it('refuses pdfa with encrypt or attachments before any job, naming the field', async () => {
    const url = files.add('plain-a.pdf', await makePdf(1))
    for (const [input, path] of [
      [{ url, pdfa: 'PDF/A-2b', encrypt: { userPassword: 'secret' } }, 'input.encrypt'],
      [{ url, pdfa: 'PDF/A-3b', attachments: [{ url }] }, 'input.attachments'],
      // PDF/A-1 has no transparency, and a stamp is half transparent unless told otherwise.
      [{ url, pdfa: 'PDF/A-1b', stamp: { text: 'X' } }, 'input.stamp.opacity'],
      [{ url, pdfa: 'PDF/A-4' }, 'input.pdfa'],
      [{ url, maxImageResolution: 100 }, 'input.maxImageResolution'],
      [{ url, imageQuality: 0 }, 'input.imageQuality'],
    ] as const) {
      const res = await api('POST', '/v1/utilities/edit-pdf', { key: inputs.key, body: { input } })
      expect(res.status, JSON.stringify(input)).toBe(400)
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path)
    }
  })
})
