import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { objectNameOf } from '../../contract/ids.js'
import { BIN_DIR } from '../platform/platform.js'
import { makePdf } from '../support/pdfs.js'
import { pictureSize } from '../support/pictures.js'
import { readZip } from '../support/zips.js'
import { FileServer } from '../support/file-server.js'
import {
  chromiumlyConversions,
  chromiumlyErrors,
  chromiumlyPdfEdits,
  chromiumlyScreenshots,
  pythonClientRound,
  SERVED_PAGE,
  textOf,
} from '../support/gotenberg-clients.js'
import { officeDocument } from '../support/fixtures.js'
import { noisePng } from '../support/office-documents.js'
import { api } from './helpers/api.js'
import { createKey } from './helpers/keys.js'
import { fileScratch } from '../support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratchRoot = fileScratch('dutil-test-gotenberg-clients-')

/**
 * Gotenberg's published clients against the local platform's Gotenberg routes (on there, as a
 * chart with gateway.gotenbergRoutes.enabled has them). Each request is a job of the key.
 */
let files: FileServer
let pageUrl: string

beforeAll(async () => {
  files = await new FileServer().start()
  pageUrl = files.add('page.html', Buffer.from(SERVED_PAGE), 'text/html')
})
afterAll(() => files.stop())

const target = async (name: string) => ({
  gatewayUrl: inject('gatewayUrl'),
  key: (await createKey({ name })).key,
  pageUrl,
})

describe('chromiumly (npm) against the Gotenberg routes', () => {
  it('converts HTML with its asset, a URL, office documents (single, several and merged), merges and splits PDFs; each request is a job of the key', async () => {
    await chromiumlyConversions(await target('chromiumly'))
  }, 240_000)

  it("takes screenshots of HTML with its picture (the whole page, as Gotenberg's default) and of a URL (the viewport, jpeg) as html-image jobs", async () => {
    await chromiumlyScreenshots(await target('chromiumly-screenshots'))
  }, 120_000)

  it('flattens a form, turns a page, writes metadata, watermarks and stamps text on PDFs and encrypts one as edit-pdf jobs, and reads metadata as pdf-info jobs', async () => {
    await chromiumlyPdfEdits(await target('chromiumly-edits'))
  }, 120_000)

  it('reads the errors: 400 naming a field dutil does not support, 401 for a wrong key, 400 for a document that is not one', async () => {
    await chromiumlyErrors(await target('chromiumly-errors'))
  }, 120_000)
})

describe('gotenberg-client (PyPI) against the Gotenberg routes', () => {
  it('converts HTML, a URL and office documents, merges and splits, checks health and reads an error', async () => {
    await pythonClientRound(await target('gotenberg-client'))
  }, 300_000)
})

describe('a plain form, as curl --form sends it', () => {
  const post = (path: string, form: FormData, headers: Record<string, string>) =>
    fetch(`${inject('gatewayUrl')}${path}`, { method: 'POST', headers, body: form })

  it('names the answer after Gotenberg-Output-Filename, answers the trace, and is a job kubectl and the API show', async () => {
    const { key } = await createKey({ name: 'curl' })
    const basic = { Authorization: `Basic ${Buffer.from(`anyone:${key}`).toString('base64')}` }
    const form = new FormData()
    form.append('files', new Blob([await makePdf(2)]), 'report.pdf')
    form.append('splitMode', 'intervals')
    form.append('splitSpan', '1')
    const res = await post('/forms/pdfengines/split', form, {
      ...basic,
      'Gotenberg-Output-Filename': 'pages',
      'Gotenberg-Trace': 'trace-7',
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/zip')
    expect(res.headers.get('content-disposition')).toContain('filename="pages.zip"')
    expect(res.headers.get('gotenberg-trace')).toBe('trace-7')
    const entries = await readZip(Buffer.from(await res.arrayBuffer()))
    expect(entries.map((e) => e.name)).toEqual(['report_0.pdf', 'report_1.pdf'])
    const jobId = res.headers.get('dutil-job-id')!
    const job = await api('GET', `/v1/jobs/${jobId}`, { key })
    expect(job.body).toMatchObject({
      utility: 'split-pdf',
      status: 'succeeded',
      metadata: { gotenbergRoute: '/forms/pdfengines/split' },
    })
    const listed = execFileSync(
      join(BIN_DIR, 'kubectl'),
      ['--kubeconfig', inject('kubeconfigPath'), 'get', 'utilityjobs', '-n', 'dutil', objectNameOf(jobId)],
      { encoding: 'utf8' },
    )
    expect(listed).toMatch(new RegExp(`${jobId}\\s+split-pdf\\s+sync\\s+succeeded`))
  })

  it('answers a screenshot as its picture, named after Gotenberg-Output-Filename with its format', async () => {
    const { key } = await createKey({ name: 'curl-screenshot' })
    const form = new FormData()
    form.append('url', pageUrl)
    form.append('format', 'webp')
    form.append('clip', 'true')
    const res = await post('/forms/chromium/screenshot/url', form, {
      Authorization: `Bearer ${key}`,
      'Gotenberg-Output-Filename': 'front',
    })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/webp')
    expect(res.headers.get('content-disposition')).toContain('filename="front.webp"')
    expect(pictureSize(Buffer.from(await res.arrayBuffer()))).toEqual({ format: 'webp', width: 800, height: 600 })
  })

  it("converts a CSV file and a flat OpenDocument text through LibreOffice's route, merged into one PDF", async () => {
    const { key } = await createKey({ name: 'curl-office' })
    const form = new FormData()
    form.append('files', new Blob(['city,people\nLisbon,545000\nPorto,232000\n']), '1-cities.csv')
    form.append('files', new Blob([officeDocument('text.fodt')]), '2-letter.fodt')
    form.append('merge', 'true')
    form.append('quality', '60')
    const res = await post('/forms/libreoffice/convert', form, { Authorization: `Bearer ${key}` })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    const text = textOf(Buffer.from(await res.arrayBuffer()))
    expect(text).toContain('Lisbon')
    expect(text).toContain('dutil office fixture, page 1')
    expect(
      res.headers
        .get('dutil-job-id')!
        .split(',')
        .map((id) => id.trim()),
    ).toHaveLength(3)
  })

  it("watermarks PDFs with a picture sent as the route's watermark file", async () => {
    const { key } = await createKey({ name: 'curl-watermark-image' })
    const form = new FormData()
    form.append('files', new Blob([await makePdf(2)]), 'report.pdf')
    form.append('watermark', new Blob([noisePng(24)]), 'logo.png')
    form.append('watermarkSource', 'image')
    form.append('watermarkPages', '2')
    const res = await post('/forms/pdfengines/watermark', form, { Authorization: `Bearer ${key}` })
    expect(res.status, await res.clone().text()).toBe(200)
    const dir = mkdtempSync(join(scratchRoot, 'dutil-watermark-'))
    writeFileSync(join(dir, 'out.pdf'), Buffer.from(await res.arrayBuffer()))
    // pdfimages -list: the picture, 24 px wide, on page 2 only.
    const images = execFileSync('pdfimages', ['-list', join(dir, 'out.pdf')], { encoding: 'utf8' })
      .split('\n')
      .slice(2)
      .filter((l) => l.trim())
      .map((l) => l.trim().split(/\s+/).slice(0, 5))
    expect(images.map(([page, , , width]) => [page, width])).toEqual([['2', '24']])
  })

  it('embeds files in PDFs through the embed route, with the media type embedsMetadata gives', async () => {
    const { key } = await createKey({ name: 'curl-embed' })
    const xml = Buffer.from('<?xml version="1.0"?><rsm:CrossIndustryInvoice/>')
    const form = new FormData()
    form.append('files', new Blob([await makePdf(1)]), 'invoice.pdf')
    form.append('embeds', new Blob([xml]), 'factur-x.xml')
    form.append('embedsMetadata', JSON.stringify({ 'factur-x.xml': { mimeType: 'text/xml' } }))
    const res = await post('/forms/pdfengines/embed', form, { Authorization: `Bearer ${key}` })
    expect(res.status, await res.clone().text()).toBe(200)
    const dir = mkdtempSync(join(scratchRoot, 'dutil-embed-'))
    const path = join(dir, 'out.pdf')
    writeFileSync(path, Buffer.from(await res.arrayBuffer()))
    const listed = execFileSync('qpdf', ['--list-attachments', '--verbose', path], { encoding: 'utf8' })
    expect(listed).toContain('factur-x.xml')
    expect(listed).toMatch(/text\/xml/)
    expect(execFileSync('qpdf', ['--show-attachment=factur-x.xml', path]).equals(xml)).toBe(true)
  })

  it("opens a protected Word file with the LibreOffice route's password, which no job view shows", async () => {
    const { key } = await createKey({ name: 'curl-office-password' })
    const form = new FormData()
    form.append('files', new Blob([officeDocument('encrypted.docx')]), 'locked.docx')
    form.append('password', 'dutil')
    const res = await post('/forms/libreoffice/convert', form, { Authorization: `Bearer ${key}` })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(textOf(Buffer.from(await res.arrayBuffer()))).toContain('dutil office fixture, page 1')
    const job = await api('GET', `/v1/jobs/${res.headers.get('dutil-job-id')}`, { key })
    expect(job.body.status).toBe('succeeded')
    expect(JSON.stringify(job.body)).not.toContain('"dutil"')
  })

  it('answers 503 naming the job when it runs past its time limit', async () => {
    const { key } = await createKey({ name: 'curl-timeout' })
    const form = new FormData()
    form.append('url', `${files.url}/stall/page.html`)
    const res = await post('/forms/chromium/convert/url', form, {
      Authorization: `Bearer ${key}`,
      'Dutil-Test-Deadline-Seconds': '3',
    })
    expect(res.status).toBe(503)
    const text = await res.text()
    expect(text).toMatch(/^upstream_timeout: /)
    expect(text).toContain(`(job ${res.headers.get('dutil-job-id')})`)
    const job = await api('GET', `/v1/jobs/${res.headers.get('dutil-job-id')}`, { key })
    expect(job.body).toMatchObject({ status: 'failed', error: { code: 'upstream_timeout' } })
  })

  it("answers 429 with Retry-After past the key's rate limit, in plain text", async () => {
    const { key } = await createKey({ name: 'curl-limited', rateLimitPerMinute: 1 })
    const once = () => post('/forms/pdfengines/merge', new FormData(), { 'X-Api-Key': key })
    expect((await once()).status).toBe(400) // counted, then refused for its empty form
    const limited = await once()
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await limited.text()).toMatch(/^rate_limited: /)
  })

  it('answers plain text: 401 with a Basic challenge, 400 for no form or an unknown field, 404 for a route dutil does not serve; /health and /version need no key', async () => {
    const { key } = await createKey({ name: 'curl-errors' })
    const none = await post('/forms/pdfengines/merge', new FormData(), {})
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="dutil"/)
    expect(none.headers.get('content-type')).toMatch(/^text\/plain/)
    const bearer = { Authorization: `Bearer ${key}` }
    const json = await fetch(`${inject('gatewayUrl')}/forms/pdfengines/merge`, {
      method: 'POST',
      headers: { ...bearer, 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(json.status).toBe(400)
    expect(await json.text()).toMatch(/^invalid_request: Send the request as multipart\/form-data/)
    const unknown = new FormData()
    unknown.append('files', new Blob([await makePdf(1)]), 'a.pdf')
    unknown.append('files', new Blob([await makePdf(1)]), 'b.pdf')
    unknown.append('colour', 'red')
    const refused = await post('/forms/pdfengines/merge', unknown, { 'X-Api-Key': key })
    expect(refused.status).toBe(400)
    expect(await refused.text()).toContain("form field 'colour' is not one this route takes")
    expect((await post('/forms/pdfengines/factur-x', new FormData(), bearer)).status).toBe(404)
    const health = await fetch(`${inject('gatewayUrl')}/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toMatchObject({
      status: 'up',
      details: { chromium: { status: 'up' }, libreoffice: { status: 'up' } },
    })
    expect(await (await fetch(`${inject('gatewayUrl')}/version`)).text()).toMatch(/^8 /)
    // No job was made for any of them.
    expect((await api('GET', '/v1/jobs', { key })).body.items).toEqual([])
  })
})
