import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PDFDocument } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { api, download } from './helpers/api.js'
import { createKey } from './helpers/keys.js'
import { jobOutputs } from './helpers/storage.js'
import { FileServer } from '../support/file-server.js'
import { hostile } from '../support/fixtures.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'
import { verapdf } from '../support/verapdf.js'
import { fileScratch } from '../support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratch = fileScratch('dutil-html-pdf-')

let files: FileServer
let key: string
beforeAll(async () => {
  files = await new FileServer().start()
  key = (await createKey()).key
  files.add(
    'style.css',
    Buffer.from('body { font-family: sans-serif; background: #eef } h1 { color: #246 }'),
    'text/css',
  )
})
afterAll(() => files.stop())

const page = (body: string, title = 'Invoice 42') =>
  Buffer.from(
    `<!doctype html><html><head><title>${title}</title><link rel="stylesheet" href="/files/style.css"></head><body>${body}</body></html>`,
  )
const render = (input: unknown) => api('POST', '/v1/utilities/html-pdf', { key, body: { input } })

/** Page size in points, within Chromium's rounding (A4 comes out 595.92 × 841.92). */
function expectSize(size: { width: number; height: number }, width: number, height: number): void {
  expect(Math.abs(size.width - width)).toBeLessThan(1.5)
  expect(Math.abs(size.height - height)).toBeLessThan(1.5)
}

/** The text of a PDF, as pdftotext reads it. */
function pdfText(pdf: Buffer): string {
  const dir = mkdtempSync(join(scratch, 'dutil-html-pdf-'))
  writeFileSync(join(dir, 'out.pdf'), pdf)
  return execFileSync('pdftotext', [join(dir, 'out.pdf'), '-'], { encoding: 'utf8' })
}

async function pdfOf(job: { result: { files: Array<{ url: string; size: number }> } }): Promise<PDFDocument> {
  const [file] = job.result.files
  const got = await download(file.url)
  expect(got.bytes.length).toBe(file.size)
  return PDFDocument.load(got.bytes)
}

describe('html-pdf through the whole platform', () => {
  it('given an HTML page with a stylesheet, a sync run answers 200 with an A4 PDF named after the page', async () => {
    const url = files.add('invoice.html', page('<h1>Invoice 42</h1><p>Total: 12.00</p>'), 'text/html')
    const res = await render({
      url,
      pdfOptions: { format: 'A4', printBackground: true, margin: { top: '10mm', bottom: '10mm' } },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ utility: 'html-pdf', status: 'succeeded', error: null })
    expect(res.body.result.files).toHaveLength(1)
    expect(res.body.result.files[0]).toMatchObject({ name: 'invoice.pdf', contentType: 'application/pdf' })
    const pdf = await pdfOf(res.body)
    expect(pdf.getPageCount()).toBe(1)
    expectSize(pdf.getPage(0).getSize(), 595.3, 841.9) // A4
    expect(pdf.getTitle()).toBe('Invoice 42')
  })

  it('makes an archival (PDF/A-2b, -3b) and an accessible (PDF/UA-1) PDF that veraPDF passes, and says what a page lacks for PDF/UA', async () => {
    const html = `<!doctype html><html lang="en"><head><title>Invoice 42 – Zürich</title></head><body>
      <h1>Invoice 42</h1><p>Total: 12.00 CHF</p><p><a href="https://example.com/pay">Pay online</a></p></body></html>`
    const bytesOf = async (pdfOptions: object) => {
      const res = await render({ html, pdfOptions })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      return Buffer.from((await download(res.body.result.files[0].url)).bytes)
    }
    expect(await verapdf(await bytesOf({ pdfa: 'PDF/A-2b' }))).toEqual({ compliant: true, level: '2b', failed: [] })
    const accessible = await bytesOf({ pdfua: true })
    expect(await verapdf(accessible, 'ua1')).toEqual({ compliant: true, level: 'ua1', failed: [] })
    expect((await PDFDocument.load(accessible)).getTitle()).toBe('Invoice 42 – Zürich')
    const both = await bytesOf({ pdfa: 'PDF/A-3b', pdfua: true, format: 'A4' })
    expect(await verapdf(both)).toEqual({ compliant: true, level: '3b', failed: [] })
    expect(await verapdf(both, 'ua1')).toEqual({ compliant: true, level: 'ua1', failed: [] })
    expect(pdfText(both)).toContain('Total: 12.00 CHF')
    // A page without a language cannot be an accessible PDF: the job says so.
    const noLang = await render({ html: '<title>T</title><p>x</p>', pdfOptions: { pdfua: true } })
    expect(noLang.body).toMatchObject({ status: 'failed', error: { code: 'upstream_rejected' } })
    expect(noLang.body.error.message).toMatch(/declares no language/)
    const untagged = await render({ html, pdfOptions: { pdfua: true, tagged: false } })
    expect(untagged.status).toBe(400)
    expect(JSON.stringify(untagged.body.error.details)).toContain('pdfOptions.tagged')
  })

  it('maps orientation, width/height and scale onto the page', async () => {
    const url = files.add('wide.html', page('<p>wide</p>'), 'text/html')
    const landscape = await render({ url, pdfOptions: { format: 'A5', orientation: 'landscape' } })
    const a5 = (await pdfOf(landscape.body)).getPage(0).getSize()
    expectSize(a5, 595.3, 419.5) // A5 turned
    const custom = await render({ url, pdfOptions: { width: '100mm', height: '50mm', scale: 0.5 } })
    const c = (await pdfOf(custom.body)).getPage(0).getSize()
    expectSize(c, 283.5, 141.7) // 100 × 50 mm
  })

  it('prints the page ranges asked for with a footer, waits for what the page adds after its load, for the screen; refuses ranges past the end and waits past their bound', async () => {
    const shaped = `<style>@media screen { .print { display: none } } @media print { .screen { display: none } }
      .page { break-after: page }</style><p class="screen">Screen layout</p><p class="print">Print layout</p>
      <div class="page">First</div><div class="page">Second</div><div>Third</div>
      <script>setTimeout(() => { const p = document.createElement('p'); p.id = 'late'; p.textContent = 'Late content'; document.body.prepend(p) }, 300)</script>`
    const res = await render({
      html: shaped,
      media: 'screen',
      wait: { selector: '#late', expression: 'document.getElementById("late") !== null', delayMs: 50 },
      pdfOptions: {
        pageRanges: '2-',
        margin: { bottom: '20mm' },
        footerTemplate:
          '<div style="font-size:10px;width:100%;text-align:center">Sheet <span class="pageNumber"></span></div>',
        outline: true,
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const pdf = await pdfOf(res.body)
    expect(pdf.getPageCount()).toBe(2)
    const text = pdfText((await download(res.body.result.files[0].url)).bytes)
    expect(text).not.toContain('First')
    expect(text).toContain('Third')
    expect(text).toContain('Sheet 2')
    const past = await render({ html: '<p>One page</p>', pdfOptions: { pageRanges: '3-4' } })
    expect(past.body).toMatchObject({ status: 'failed', error: { code: 'upstream_rejected' } })
    expect(past.body.error.message).toMatch(/past the end of the document/)
    const tooLong = await render({ html: '<p>x</p>', wait: { delayMs: 30_001 } })
    expect(tooLong.status).toBe(400)
  })

  it('prints the whole page on one page as tall as its content, on the paper width, with no white background when asked', async () => {
    const rows = Array.from({ length: 120 }, (_, i) => `<p>Row ${i + 1} of the long page</p>`).join('')
    const html = `<!doctype html><html><body style="margin:0">${rows}</body></html>`
    const paged = await render({ html, pdfOptions: { format: 'A4' } })
    expect(paged.status, JSON.stringify(paged.body)).toBe(200)
    expect((await pdfOf(paged.body)).getPageCount()).toBeGreaterThan(2)
    const single = await render({
      html,
      pdfOptions: { format: 'A4', singlePage: true, margin: { top: '10mm', bottom: '10mm' }, omitBackground: true },
    })
    expect(single.status, JSON.stringify(single.body)).toBe(200)
    const pdf = await pdfOf(single.body)
    expect(pdf.getPageCount()).toBe(1)
    const { width, height } = pdf.getPage(0).getSize()
    expect(Math.abs(width - 8.27 * 72)).toBeLessThan(1.5)
    expect(height).toBeGreaterThan(3 * 11.7 * 72)
    const text = pdfText(Buffer.from(await pdf.save()))
    expect(text).toContain('Row 1 of the long page')
    expect(text).toContain('Row 120 of the long page')

    const refused = await render({ html, pdfOptions: { singlePage: true, pageRanges: '1' } })
    expect(refused.status).toBe(400)
    expect(refused.body.error.details).toEqual([
      { path: 'input.pdfOptions.pageRanges', message: 'is not taken with singlePage' },
    ])
  })

  it('renders an s3:// document stored by one of its own jobs (an unzipped page)', async () => {
    const zip = writeZip([fileEntry('letter.html', page('<h1>From storage</h1>', 'Stored'))])
    const unzipped = await api('POST', '/v1/utilities/unzip-files', {
      key,
      body: { input: { url: files.add('letter.zip', zip, 'application/zip') } },
    })
    expect(unzipped.status).toBe(200)
    const res = await render({ url: `s3://${inject('storage').bucket}/${unzipped.body.result.files[0].key}` })
    expect(res.status).toBe(200)
    expect(res.body.result.files[0].name).toBe('letter.pdf')
    expect((await pdfOf(res.body)).getTitle()).toBe('Stored')
  })

  it('given a page that answers 404, the run fails as upstream_rejected with upstreamStatus 404', async () => {
    const res = await render({ url: `${files.url}/status/404` })
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({ code: 'upstream_rejected', upstreamStatus: 404 })
  })

  it('given HTML that loads file:///etc/passwd, the run fails as upstream_rejected and no PDF is stored', async () => {
    const url = files.add('file-url.html', hostile('file-url.html'), 'text/html')
    const res = await render({ url })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ status: 'failed', result: null, error: { code: 'upstream_rejected' } })
    expect(res.body.error.message).toMatch(/file:\/\/\/etc\/(passwd|shadow|hostname)/)
    expect(await jobOutputs(res.body)).toEqual([])
  })

  it('given a page URL that redirects to the metadata address, the run is refused before connecting there', async () => {
    const res = await render({ url: files.redirect('http://169.254.169.254/latest/meta-data/') })
    expect(res.status).toBe(422)
    expect(res.body.error.code).toBe('upstream_rejected')
    expect(res.body.error.message).toContain('169.254.169.254')
    expect(await jobOutputs(res.body)).toEqual([])
  })

  it('given a page whose image redirects to a private address, the run fails naming that address', async () => {
    const url = files.add(
      'sneaky.html',
      page(`<img src="${files.redirect('http://10.20.30.40/internal.png')}">`),
      'text/html',
    )
    const res = await render({ url })
    expect(res.status).toBe(422)
    expect(res.body.error.code).toBe('upstream_rejected')
    expect(res.body.error.message).toContain('http://10.20.30.40/internal.png')
    expect(await jobOutputs(res.body)).toEqual([])
  })
})

describe('html-pdf with the page in the request', () => {
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64',
  )
  /** A page whose title tells whether its picture loaded; its stylesheet sets the paper to 300 × 200 px. */
  const inlinePage = (img: string, css: string) =>
    `<!doctype html><html><head><title>loading</title><link rel="stylesheet" href="${css}"></head>` +
    `<body onload="document.title = document.images[0].naturalWidth > 0 ? 'picture loaded' : 'no picture'">` +
    `<img src="${img}"><p>Rendered from the request</p></body></html>`
  const PAGE_CSS = Buffer.from('@page { size: 300px 200px; margin: 0 } body { margin: 0 }')

  async function form(
    k: string,
    parts: Array<[string, Buffer | string, string?]>,
    headers: Record<string, string> = {},
  ) {
    const body = new FormData()
    for (const [name, value, fileName] of parts)
      body.append(name, typeof value === 'string' ? value : new Blob([value]), ...(fileName ? [fileName] : []))
    return fetch(`${inject('gatewayUrl')}/v1/utilities/html-pdf`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${k}`, ...headers },
      body,
    })
  }

  it('renders html given in a multipart run with its picture and stylesheet as parts, answering the PDF itself', async () => {
    const res = await form(
      key,
      [
        [
          'input',
          JSON.stringify({ html: inlinePage('logo.png', 'page.css'), pdfOptions: { preferCSSPageSize: true } }),
        ],
        ['assets', PNG, 'logo.png'],
        ['assets', PAGE_CSS, 'page.css'],
      ],
      { Accept: 'application/pdf' },
    )
    expect(res.status, await res.clone().text()).toBe(200)
    expect(res.headers.get('content-disposition')).toContain('filename="document.pdf"')
    const pdf = await PDFDocument.load(new Uint8Array(await res.arrayBuffer()))
    expect(pdf.getTitle()).toBe('picture loaded')
    expectSize(pdf.getPage(0).getSize(), 225, 150) // 300 × 200 CSS px, from the stylesheet
  })

  it('renders html in a JSON body with uploads named by the paths it uses; a name it lacks is a missing picture, not a failure', async () => {
    const upload = async (body: Buffer, name: string) => {
      const res = await fetch(`${inject('gatewayUrl')}/v1/files?name=${name}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}` },
        body,
      })
      expect(res.status).toBe(201)
      return ((await res.json()) as { url: string }).url
    }
    const [logo, css] = [await upload(PNG, 'logo.png'), await upload(PAGE_CSS, 'print.css')]
    const res = await render({
      html: inlinePage('img/brand.png', 'styles/print.css'),
      assets: [
        { url: logo, name: 'img/brand.png' },
        { url: css, name: 'styles/print.css' },
      ],
      pdfOptions: { preferCSSPageSize: true },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result.files[0].name).toBe('document.pdf')
    const pdf = await pdfOf(res.body)
    expect(pdf.getTitle()).toBe('picture loaded')
    expectSize(pdf.getPage(0).getSize(), 225, 150)
    const without = await render({
      html: inlinePage('img/other.png', 'styles/print.css'),
      assets: [{ url: css, name: 'styles/print.css' }],
    })
    expect(without.status).toBe(200)
    expect((await pdfOf(without.body)).getTitle()).toBe('no picture')
  })

  it("refuses another key's upload as an asset (404), and a page in the request reaches the network only as a URL page does", async () => {
    const other = (await createKey()).key
    const theirs = await fetch(`${inject('gatewayUrl')}/v1/files?name=logo.png`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${other}` },
      body: PNG,
    })
    const { url } = (await theirs.json()) as { url: string }
    const stolen = await render({ html: inlinePage('logo.png', 'a.css'), assets: [{ url }] })
    expect(stolen.status).toBe(404)
    expect(stolen.body.error.code).toBe('not_found')
    const res = await render({ html: '<img src="http://169.254.169.254/latest/meta-data/">' })
    expect(res.body.status).toBe('failed')
    expect(res.body.error.code).toBe('upstream_rejected')
    expect(res.body.error.message).toContain('169.254.169.254')
    expect(await jobOutputs(res.body)).toEqual([])
  })

  it('renders Markdown given in the request with its picture as an upload, in the default stylesheet, titled by its first heading', async () => {
    const upload = await fetch(`${inject('gatewayUrl')}/v1/files?name=chart.png`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: PNG,
    })
    const { url: chart } = (await upload.json()) as { url: string }
    const markdown = [
      '# Quarterly report',
      '',
      '| City | People |',
      '|---|---:|',
      '| Porto | 232,000 |',
      '',
      '- [x] ~~Draft~~ Reviewed',
      '',
      '![chart](img/chart.png)',
      '<script>addEventListener("load", () => (document.title = document.images[0].naturalWidth > 0 ? "picture loaded" : "no picture"))</script>',
    ].join('\n')
    const res = await render({ markdown, assets: [{ url: chart, name: 'img/chart.png' }] })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result.files[0].name).toBe('document.pdf')
    const pdf = await pdfOf(res.body)
    const text = pdfText(Buffer.from(await pdf.save()))
    expect(text).toContain('Quarterly report')
    expect(text).toMatch(/Porto\s+232,000/)
    expect(text).toContain('Reviewed')
    expect(text).not.toContain('|---')
    // The script ran after the picture loaded (a page like any other): its title says so.
    expect(pdf.getTitle()).toBe('picture loaded')
    const plain = await render({ markdown: '# Minutes\n\nNothing to report.' })
    expect((await pdfOf(plain.body)).getTitle()).toBe('Minutes')
  })

  it('renders an uploaded README.md in a one-call run, with a stylesheet of its own in place of the default one', async () => {
    const body = new FormData()
    body.append('file', new Blob(['# Read me\n\nFirst *steps*.\n']), 'README.md')
    body.append(
      'input',
      JSON.stringify({
        stylesheet: '@page { size: 300px 200px; margin: 0 } body { margin: 0 }',
        pdfOptions: { preferCSSPageSize: true },
      }),
    )
    const res = await fetch(`${inject('gatewayUrl')}/v1/utilities/html-pdf`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, Accept: 'application/pdf' },
      body,
    })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(res.headers.get('content-disposition')).toContain('filename="README.pdf"')
    const bytes = Buffer.from(await res.arrayBuffer())
    expect(pdfText(bytes)).toContain('First steps.')
    const pdf = await PDFDocument.load(bytes)
    expect(pdf.getTitle()).toBe('Read me')
    expectSize(pdf.getPage(0).getSize(), 225, 150) // 300 × 200 CSS px: the stylesheet's page
    const refused = await render({ html: '<p>x</p>', stylesheet: 'p {}' })
    expect(refused.status).toBe(400)
    expect(refused.body.error.details[0].path).toBe('input.stylesheet')
  })

  it('given Markdown whose HTML loads file:///etc/passwd, or nested past what its parser follows, the run fails as upstream_rejected', async () => {
    const res = await render({ markdown: '# Notes\n\n<img src="file:///etc/passwd">' })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ status: 'failed', result: null, error: { code: 'upstream_rejected' } })
    expect(res.body.error.message).toContain('file:///etc/passwd')
    expect(await jobOutputs(res.body)).toEqual([])
    // Markdown built to exhaust the parser is refused, not a crashed runner.
    const deep = await render({ markdown: `${'>'.repeat(200_000)} x` })
    expect(deep.status).toBe(422)
    expect(deep.body.error).toMatchObject({ code: 'upstream_rejected' })
    expect(deep.body.error.message).toMatch(/^The Markdown is too large or too deeply nested to render/)
  })
})
