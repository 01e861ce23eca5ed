import { PDFDocument } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { api, download } from './helpers/api.js'
import { createKey } from './helpers/keys.js'
import { jobOutputs } from './helpers/storage.js'
import { FileServer } from '../support/file-server.js'
import { hostile } from '../support/fixtures.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'

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

  it('maps orientation, width/height and scale onto the page', async () => {
    const url = files.add('wide.html', page('<p>wide</p>'), 'text/html')
    const landscape = await render({ url, pdfOptions: { format: 'A5', orientation: 'landscape' } })
    const a5 = (await pdfOf(landscape.body)).getPage(0).getSize()
    expectSize(a5, 595.3, 419.5) // A5 turned
    const custom = await render({ url, pdfOptions: { width: '100mm', height: '50mm', scale: 0.5 } })
    const c = (await pdfOf(custom.body)).getPage(0).getSize()
    expectSize(c, 283.5, 141.7) // 100 × 50 mm
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
