import { execFile, execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { PDFDocument } from 'pdf-lib'
import { expect } from 'vitest'
import { officeDocument } from './fixtures.js'
import { noisePng } from './office-documents.js'
import { makePdf, outlinedPdf, qpdfEncryption } from './pdfs.js'
import { decodePng, pictureSize } from './pictures.js'
import { readZip } from './zips.js'
import { verapdf } from './verapdf.js'
import { inScratch, inScratchAsync } from './scratch.js'

/**
 * Gotenberg's published clients, installed from their registries as their users install them
 * (test/platform/install-deps.sh: chromiumly from npm, gotenberg-client from PyPI, outside this
 * repository), driven against a gateway's Gotenberg routes with a dutil key as their basic-auth
 * password: the same rounds on the local platform and on the real node.
 */
const installed = join(process.env.DUTIL_CACHE ?? join(homedir(), '.cache', 'dutil'), 'gotenberg-clients')

/** Where the rounds call: the gateway (its /v1 too, to list the key's jobs), a key, and a page a runner can load. */
export interface RoundTarget {
  gatewayUrl: string
  key: string
  pageUrl: string
}

/** The page pageUrl serves. */
export const SERVED_PAGE = '<!doctype html><h1>Served page</h1>'

/** The key's jobs, newest first (GET /v1/jobs). */
async function jobsOf(gatewayUrl: string, key: string): Promise<Array<{ utility: string; status: string }>> {
  const res = await fetch(`${gatewayUrl}/v1/jobs?limit=100`, { headers: { Authorization: `Bearer ${key}` } })
  return ((await res.json()) as { items: Array<{ utility: string; status: string }> }).items
}

/** chromiumly as its users load it: CommonJS from its installed package. */
const chromiumly = () => createRequire(join(installed, 'node', 'package.json'))('chromiumly')

/** A page with its own picture (an asset) and a background colour. */
const PAGE = `<!doctype html><html><head><style>body{background:#fde}</style></head>
<body><h1>Invoice 2026-118</h1><img src="logo.png" width="120"></body></html>`

/** Three pages, one line added by its script after the load, one line for each CSS medium. */
const SHAPED_PAGE = `<!doctype html><html><head><style>
@media screen { .print { display: none } } @media print { .screen { display: none } }
.page { break-after: page }</style></head><body>
<p class="screen">Screen layout</p><p class="print">Print layout</p>
<div class="page">First</div><div class="page">Second</div><div>Third</div>
<script>setTimeout(() => { const p = document.createElement('p'); p.id = 'late'; p.textContent = 'Late content'; document.body.prepend(p) }, 300)</script>
</body></html>`

/** The page sizes (points) of a PDF, in order. */
async function pageSizes(pdf: Buffer): Promise<Array<[number, number]>> {
  const doc = await PDFDocument.load(pdf)
  return doc.getPages().map((p) => [Math.round(p.getWidth()), Math.round(p.getHeight())])
}

/** A PDF of `pages` pages `width` points wide (their order shows in a merge). */
async function pdfOfWidth(width: number, pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create()
  for (let i = 0; i < pages; i++) doc.addPage([width, 500])
  return Buffer.from(await doc.save())
}

export function textOf(pdf: Buffer, raw = false): string {
  return inScratch('dutil-gotenberg-', (dir) => {
    writeFileSync(join(dir, 'out.pdf'), pdf)
    return execFileSync('pdftotext', [...(raw ? ['-raw'] : []), join(dir, 'out.pdf'), '-'], { encoding: 'utf8' })
  })
}

/** The text in the order the pages draw it, without white space (text at an angle comes in pieces). */
const drawnTextOf = (pdf: Buffer) => textOf(pdf, true).replace(/\s+/g, '')

/**
 * chromiumly: HTML with its asset, a URL, office documents (single, several and merged), a merge
 * and a split; then each request is a job of the key, all succeeded.
 */
export async function chromiumlyConversions({ gatewayUrl, key, pageUrl }: RoundTarget): Promise<void> {
  const c = chromiumly()
  c.Chromiumly.configure({ endpoint: gatewayUrl, username: 'dutil', password: key })

  const html = await new c.HtmlConverter().convert({
    html: Buffer.from(PAGE),
    assets: [{ file: noisePng(64), name: 'logo.png' }],
    properties: { size: { width: 8.27, height: 11.7 }, landscape: true, printBackground: true },
  })
  // A4 (8.27 × 11.7 in), landscape: Chromium rounds its points up.
  const [[width, height]] = await pageSizes(html)
  expect(Math.abs(width - 842)).toBeLessThanOrEqual(1)
  expect(Math.abs(height - 595)).toBeLessThanOrEqual(1)
  expect(textOf(html)).toContain('Invoice 2026-118')

  // A page that adds content after its load, laid out for the screen, two of its three pages, a footer.
  const shaped = await new c.HtmlConverter().convert({
    html: Buffer.from(SHAPED_PAGE),
    footer: Buffer.from(
      '<div style="font-size:10px;width:100%;text-align:center">Sheet <span class="pageNumber"></span></div>',
    ),
    properties: { nativePageRanges: { from: 1, to: 2 } },
    emulatedMediaType: 'screen',
    waitForSelector: '#late',
  })
  expect(await pageSizes(shaped)).toHaveLength(2)
  const shapedText = textOf(shaped)
  expect(shapedText).toContain('Late content')
  expect(shapedText).toContain('Screen layout')
  expect(shapedText).not.toContain('Print layout')
  expect(shapedText).toContain('Sheet 2')

  // PDF/A and PDF/UA as chromiumly asks for them: html-pdf's archival, accessible PDF.
  const archived = await new c.HtmlConverter().convert({
    html: Buffer.from('<!doctype html><html lang="en"><title>Invoice 2026-118</title><h1>Invoice 2026-118</h1></html>'),
    pdfFormat: c.PdfFormat.A_2b,
    pdfUA: true,
  })
  expect(await verapdf(archived)).toEqual({ compliant: true, level: '2b', failed: [] })
  expect(await verapdf(archived, 'ua1')).toEqual({ compliant: true, level: 'ua1', failed: [] })

  const url = await new c.UrlConverter().convert({ url: pageUrl })
  expect(await pageSizes(url)).toEqual([[612, 792]]) // Gotenberg's default paper: Letter
  expect(textOf(url)).toContain('Served page')

  const docx = { data: officeDocument('text.docx'), ext: 'docx' }
  const three = { data: officeDocument('three-pages.docx'), ext: 'docx' }
  const merged = await c.LibreOffice.convert({ files: [docx, three], merge: true })
  expect(await pageSizes(merged)).toHaveLength(4)
  const separate = await readZip(await c.LibreOffice.convert({ files: [docx, three] }))
  expect(separate.map((e) => e.name)).toHaveLength(2)
  expect(separate.every((e) => e.name.endsWith('.pdf'))).toBe(true)
  const pageCounts = await Promise.all(separate.map(async (e) => (await pageSizes(e.data)).length))
  expect(pageCounts.sort()).toEqual([1, 3])

  const mergedPdfs = await c.PDFEngines.merge({ files: [await pdfOfWidth(200, 2), await pdfOfWidth(300, 1)] })
  expect((await pageSizes(mergedPdfs)).map(([w]) => w)).toEqual([200, 200, 300])

  const split = await readZip(
    await c.PDFEngines.split({ files: [await makePdf(3)], options: { mode: 'intervals', span: '1' } }),
  )
  expect(split).toHaveLength(3)
  for (const e of split) expect(await pageSizes(e.data)).toHaveLength(1)
  const halves = await readZip(
    await c.PDFEngines.split({ files: [await makePdf(3)], options: { mode: 'intervals', span: '2' } }),
  )
  expect(await Promise.all(halves.map(async (e) => (await pageSizes(e.data)).length))).toEqual([2, 1])

  const jobs = await jobsOf(gatewayUrl, key)
  expect(jobs.map((j) => j.utility).sort()).toEqual(
    [
      'html-pdf',
      'html-pdf',
      'html-pdf',
      'html-pdf',
      'office-pdf',
      'office-pdf',
      'merge-pdf',
      'office-pdf',
      'office-pdf',
      'merge-pdf',
      'split-pdf',
      'split-pdf',
    ].sort(),
  )
  expect(jobs.every((j) => j.status === 'succeeded')).toBe(true)
}

/**
 * chromiumly's screenshots: a page given as HTML with its picture (the whole page by default), a
 * URL clipped to the viewport as jpeg; each an html-image job of the key.
 */
export async function chromiumlyScreenshots({ gatewayUrl, key, pageUrl }: RoundTarget): Promise<void> {
  const c = chromiumly()
  c.Chromiumly.configure({ endpoint: gatewayUrl, username: 'dutil', password: key })
  const tall = `<!doctype html><html><body style="margin:0;background:rgb(255,221,238)">
<div style="height:900px"><img src="logo.png" width="120"></div><div id="foot" style="height:100px;background:rgb(0,0,255)"></div></body></html>`
  const page = await new c.HtmlScreenshot().capture({
    html: Buffer.from(tall),
    assets: [{ file: noisePng(64), name: 'logo.png' }],
    properties: { format: 'png', width: 400, height: 300 },
  })
  // Gotenberg's screenshot is the whole page unless clipped: 400 wide, as tall as the page.
  const png = decodePng(page)
  expect({ width: png.width, height: png.height }).toEqual({ width: 400, height: 1000 })
  expect(png.rgba(200, 950)).toEqual([0, 0, 255, 255])
  expect(png.rgba(300, 50)).toEqual([255, 221, 238, 255])
  const shot = await new c.UrlScreenshot().capture({
    url: pageUrl,
    properties: { format: 'jpeg', quality: 60, width: 320, height: 240, clip: true },
  })
  expect(pictureSize(shot)).toEqual({ format: 'jpeg', width: 320, height: 240 })
  const jobs = await jobsOf(gatewayUrl, key)
  expect(jobs.map((j) => `${j.utility} ${j.status}`)).toEqual(['html-image succeeded', 'html-image succeeded'])
}

/**
 * chromiumly's PDF edits: a form flattened, a page turned, metadata written, a text watermark, a
 * text stamp, an encryption and bookmarks written, each an edit-pdf job of the key; then metadata
 * and bookmarks read, a pdf-info job per PDF.
 */
export async function chromiumlyPdfEdits({ gatewayUrl, key }: RoundTarget): Promise<void> {
  const c = chromiumly()
  c.Chromiumly.configure({ endpoint: gatewayUrl, username: 'dutil', password: key })
  const form = await PDFDocument.create()
  form.addPage([400, 500])
  const field = form.getForm().createTextField('name')
  field.setText('Grace Hopper')
  field.addToPage(form.getPage(0), { x: 40, y: 400, width: 200, height: 30 })
  const flat = await c.PDFEngines.flatten([Buffer.from(await form.save())])
  expect((await PDFDocument.load(flat)).getForm().getFields()).toEqual([])
  expect(textOf(flat)).toContain('Grace Hopper')
  const turned = await PDFDocument.load(await c.PDFEngines.rotate({ files: [await makePdf(3)], angle: 90, pages: '2' }))
  expect(turned.getPages().map((p) => p.getRotation().angle)).toEqual([0, 90, 0])
  const titled = await c.PDFEngines.writeMetadata({
    files: [await makePdf(1)],
    metadata: { Title: 'Edited through Gotenberg', Author: 'dutil' },
  })
  const doc = await PDFDocument.load(titled)
  expect([doc.getTitle(), doc.getAuthor()]).toEqual(['Edited through Gotenberg', 'dutil'])
  const marked = await c.PDFEngines.watermark({
    files: [await makePdf(2)],
    watermark: { source: 'text', expression: 'CONFIDENTIAL', pages: '2' },
  })
  expect(drawnTextOf(marked)).toContain('CONFIDENTIAL')
  const stamped = await c.PDFEngines.stamp({ files: [await makePdf(1)], stamp: { source: 'text', expression: 'PAID' } })
  expect(drawnTextOf(stamped)).toContain('PAID')
  // Metadata read: one pdf-info job per PDF, the answer keyed by the names chromiumly gave them.
  const read = JSON.parse(
    (await c.PDFEngines.readMetadata({ files: [titled, await makePdf(2)] })).toString('utf8'),
  ) as Record<string, Record<string, unknown>>
  expect(read).toEqual({
    'file01.pdf': expect.objectContaining({
      FileName: 'file01.pdf',
      Title: 'Edited through Gotenberg',
      Author: 'dutil',
      PageCount: 1,
      Linearized: 'No',
    }),
    'file02.pdf': expect.objectContaining({ FileName: 'file02.pdf', PageCount: 2, MIMEType: 'application/pdf' }),
  })
  // Bookmarks read: a pdf-info job per PDF with its bookmarks, answered as Gotenberg's tree.
  const marks = JSON.parse((await c.PDFEngines.readBookmarks([await outlinedPdf()])).toString('utf8')) as unknown
  expect(marks).toEqual({
    'file01.pdf': [
      { title: 'Chapter ✓', page: 1, children: [{ title: 'Section', page: 2 }] },
      { title: 'Elsewhere', page: null },
    ],
  })
  expect(read['file01.pdf'].ModDate).toBe(read['file01.pdf'].ModifyDate)
  expect(read['file01.pdf'].ModDate).toMatch(/^\d{4}:\d{2}:\d{2} \d{2}:\d{2}:\d{2}Z$/)
  // Encrypt: an edit-pdf job whose passwords are sealed; qpdf opens the answer with them.
  const locked = await c.PDFEngines.encrypt({
    files: [await makePdf(2)],
    options: { userPassword: 'open sesame', ownerPassword: 'the owner' },
  })
  expect(qpdfEncryption(locked, 'open sesame')).toMatch(/Supplied password is user password/)
  expect(qpdfEncryption(locked, 'the owner')).toMatch(/Supplied password is owner password/)
  expect(qpdfEncryption(locked)).toMatch(/^Incorrect password supplied/)
  // Bookmarks written (an edit-pdf job), then read back (a pdf-info job).
  const outline = [{ title: 'One', page: 1, children: [{ title: 'Two ✓', page: 2 }] }]
  const withMarks = await c.PDFEngines.writeBookmarks({ files: [await makePdf(2)], bookmarks: outline })
  expect(JSON.parse((await c.PDFEngines.readBookmarks([withMarks])).toString('utf8'))).toEqual({
    'file01.pdf': outline,
  })
  // Convert to PDF/A: an edit-pdf job whose Ghostscript rewrite veraPDF passes.
  const archived = await c.PDFEngines.convert({ files: [await makePdf(2)], pdfa: c.PdfFormat.A_2b })
  expect(await verapdf(archived)).toEqual({ compliant: true, level: '2b', failed: [] })
  const jobs = await jobsOf(gatewayUrl, key)
  expect(jobs.map((j) => `${j.utility} ${j.status}`).sort()).toEqual([
    ...Array(8).fill('edit-pdf succeeded'),
    ...Array(4).fill('pdf-info succeeded'),
  ])
}

/** chromiumly reading dutil's errors: a field it does not support, a document that is not one, a wrong key. */
export async function chromiumlyErrors({ gatewayUrl, key, pageUrl }: RoundTarget): Promise<void> {
  const c = chromiumly()
  c.Chromiumly.configure({ endpoint: gatewayUrl, username: 'dutil', password: key })
  // Refused by name, in plain text, the trace the client sent answered back.
  const unsupported = new c.HtmlConverter().convert({
    html: Buffer.from(PAGE),
    userAgent: 'bot/1',
    trace: 'invoice-118',
  })
  await expect(unsupported).rejects.toThrow(
    /Status: 400[\s\S]*Trace: invoice-118[\s\S]*form field 'userAgent' is not supported by dutil/,
  )
  // Gotenberg's webhook posts the file's bytes; dutil's callbacks are signed events: refused, never sent.
  const webhook = new c.UrlConverter().convert({ url: pageUrl, webhook: { webhookUrl: 'https://127.0.0.1:9/hook' } })
  await expect(webhook).rejects.toThrow(/Status: 400[\s\S]*Gotenberg-Webhook-Url is not supported by dutil/)
  const notPdf = c.PDFEngines.merge({ files: [Buffer.from('not a pdf'), await makePdf(1)] })
  await expect(notPdf).rejects.toThrow(/Status: 400[\s\S]*upstream_rejected/)
  c.Chromiumly.configure({ endpoint: gatewayUrl, username: 'dutil', password: 'dutil_wrong' })
  await expect(new c.UrlConverter().convert({ url: pageUrl })).rejects.toThrow(/Status: 401/)
  // Nothing ran for the refused requests: the one job is the merge that failed on its input.
  const jobs = await jobsOf(gatewayUrl, key)
  expect(jobs).toEqual([expect.objectContaining({ utility: 'merge-pdf', status: 'failed' })])
}

/** gotenberg-client (Python): HTML, a URL, office documents merged, a merge, a split, health and an error. */
export async function pythonClientRound(target: RoundTarget): Promise<void> {
  await inScratchAsync('dutil-gotenberg-py-', (dir) => pythonClientRoundIn(dir, target))
}

async function pythonClientRoundIn(dir: string, { gatewayUrl, key, pageUrl }: RoundTarget): Promise<void> {
  writeFileSync(join(dir, 'index.html'), PAGE)
  writeFileSync(join(dir, 'logo.png'), noisePng(64))
  writeFileSync(join(dir, 'text.docx'), officeDocument('text.docx'))
  writeFileSync(join(dir, 'three-pages.docx'), officeDocument('three-pages.docx'))
  writeFileSync(join(dir, 'a.pdf'), await pdfOfWidth(200, 2))
  writeFileSync(join(dir, 'b.pdf'), await pdfOfWidth(300, 1))
  writeFileSync(join(dir, 'three.pdf'), await makePdf(3))
  const script = `
import json, sys
from pathlib import Path
from gotenberg_client import GotenbergClient
from gotenberg_client._errors import HttpStatusError
d = Path(sys.argv[1])
out = {}
def explain(kind, value, tb):
  # An unexpected refusal: its body says why.
  if isinstance(value, HttpStatusError):
      print(value.response.status_code, value.response.content.decode(), file=sys.stderr)
  sys.__excepthook__(kind, value, tb)
sys.excepthook = explain
with GotenbergClient(sys.argv[2], auth=("dutil", sys.argv[3]), http2=False, timeout=120) as client:
  out["health"] = client.health.health().overall.value
  with client.chromium.html_to_pdf() as route:
      r = route.index(d / "index.html").resource(d / "logo.png").run()
      r.to_file(d / "html.pdf")
  with client.chromium.url_to_pdf() as route:
      route.url(sys.argv[4]).run().to_file(d / "url.pdf")
  with client.libre_office.to_pdf() as route:
      route.convert_files([d / "text.docx", d / "three-pages.docx"]).merge(merge=True).run().to_file(d / "office.pdf")
  with client.libre_office.to_pdf() as route:
      route.convert(d / "text.docx").quality(40).reduce_image_resolution(reduce_image_resolution=True).max_image_resolution(150).export_notes(export_notes=True).run().to_file(d / "office-options.pdf")
  with client.merge.merge() as route:
      route.merge([d / "b.pdf", d / "a.pdf"]).run().to_file(d / "merged.pdf")
  with client.split.split() as route:
      r = route.split(d / "three.pdf").split_mode("intervals").split_span("1").run()
      out["split"] = type(r).__name__
      r.to_file(d / "split.zip")
  with client.split.split() as route:
      r = route.split(d / "three.pdf").split_mode("pages").split_span("3,1").split_unify(split_unify=True).run()
      out["unified"] = type(r).__name__
      r.to_file(d / "unified.pdf")
  try:
      with client.libre_office.to_pdf() as route:
          route.convert(d / "text.docx").skip_empty_pages(skip_empty_pages=True).run()
      out["error"] = None
  except HttpStatusError as e:
      out["error"] = {"status": e.response.status_code, "body": e.response.content.decode()}
print(json.dumps(out))
`
  writeFileSync(join(dir, 'run.py'), script)
  const result = await new Promise<{ code: number; out: string; err: string }>((resolve) =>
    execFile(
      join(installed, 'venv', 'bin', 'python'),
      [join(dir, 'run.py'), dir, gatewayUrl, key, pageUrl],
      { env: { PATH: process.env.PATH, PYTHONDONTWRITEBYTECODE: '1' }, timeout: 300_000 },
      (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout, err: stderr }),
    ),
  )
  expect(result.code, result.err).toBe(0)
  const out = JSON.parse(result.out)
  expect(out.health).toBe('up')
  const read = (name: string) => readFileSync(join(dir, name))
  expect(textOf(read('html.pdf'))).toContain('Invoice 2026-118')
  expect(await pageSizes(read('url.pdf'))).toEqual([[612, 792]])
  expect(await pageSizes(read('office.pdf'))).toHaveLength(4)
  // The client names its files in the order given (00000_b.pdf, 00001_a.pdf): b first.
  expect((await pageSizes(read('merged.pdf'))).map(([w]) => w)).toEqual([300, 200, 200])
  expect(out.split).toBe('ZipFileResponse')
  expect(await readZip(read('split.zip'))).toHaveLength(3)
  // Pages 3 and 1, in that order, in one file (makePdf's pages say their number).
  expect(out.unified).toBe('SingleFileResponse')
  expect(textOf(read('unified.pdf')).replace(/\s+/g, ' ').trim()).toBe('page 3 page 1')
  expect(out.error.status).toBe(400)
  expect(JSON.stringify(out.error)).toContain('skipEmptyPages')
  // Export options dutil takes (picture quality and resolution, notes) convert.
  expect(textOf(read('office-options.pdf'))).toContain('dutil office fixture, page 1')
}
