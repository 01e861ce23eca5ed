import { PDFDocument } from 'pdf-lib'
import { describe, expect, it, onTestFinished } from 'vitest'
import { readZip } from '../support/zips.js'
import { serveSamples } from './samples.js'

describe("make dev's sample files", () => {
  it('serves a 3-page PDF, an HTML page, a zip and an XLS workbook on loopback, and names them on a miss', async () => {
    const samples = await serveSamples(0)
    onTestFinished(() => samples.close())
    expect(samples.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(samples.names).toEqual(['sample.pdf', 'sample.html', 'sample.zip', 'sample.xls'])
    const get = async (name: string) => {
      const res = await fetch(`${samples.url}/${name}`)
      return { res, body: Buffer.from(await res.arrayBuffer()) }
    }
    const pdf = await get('sample.pdf')
    expect(pdf.res.headers.get('content-type')).toBe('application/pdf')
    expect((await PDFDocument.load(pdf.body)).getPageCount()).toBe(3)
    const html = await get('sample.html')
    expect(html.body.toString()).toContain('<h1>Hello from dutil</h1>')
    const zip = await get('sample.zip')
    expect((await readZip(zip.body)).map((e) => e.name)).toEqual(['report.pdf', 'notes/readme.txt'])
    const xls = await get('sample.xls')
    // An OLE2 compound file, as every .xls is.
    expect(xls.body.subarray(0, 8).toString('hex')).toBe('d0cf11e0a1b11ae1')
    const miss = await get('report.docx')
    expect(miss.res.status).toBe(404)
    expect(miss.body.toString()).toContain('sample.pdf, sample.html, sample.zip, sample.xls')
  })
})
