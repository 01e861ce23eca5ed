import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PDFDocument } from 'pdf-lib'
import { describe, expect, inject, it } from 'vitest'
import { api, download } from './helpers/api.js'
import { jobInputs } from './helpers/job-inputs.js'
import { jobOutputs } from './helpers/storage.js'
import { hostile } from '../support/fixtures.js'
import { makePdf, outlinedPdf } from '../support/pdfs.js'
import { fileScratch } from '../support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratchRoot = fileScratch('dutil-test-pdf-info-')

const inputs = jobInputs()
const { files } = inputs

/** `bytes` rewritten by qpdf with `args` (encrypted, linearized): how such PDFs come from other tools. */
function qpdfMade(bytes: Buffer, args: string[]): Buffer {
  const dir = mkdtempSync(join(scratchRoot, 'dutil-info-'))
  writeFileSync(join(dir, 'in.pdf'), bytes)
  execFileSync('qpdf', [join(dir, 'in.pdf'), ...args, join(dir, 'out.pdf')])
  return readFileSync(join(dir, 'out.pdf'))
}

describe('pdf-info through the whole platform', () => {
  it("reads a PDF's page count, version and document information, storing nothing", async () => {
    const doc = await PDFDocument.create()
    for (let i = 0; i < 3; i++) doc.addPage([595, 842])
    doc.setTitle('Quarterly report')
    doc.setAuthor('Ada Lovelace')
    doc.setKeywords(['report', 'q3'])
    doc.setCreationDate(new Date('2026-07-01T09:30:00Z'))
    doc.setModificationDate(new Date('2026-07-02T10:00:00Z'))
    const url = files.add('report.pdf', Buffer.from(await doc.save()))
    const res = await api('POST', '/v1/utilities/pdf-info', { key: inputs.key, body: { input: { url } } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result).toEqual({
      files: [],
      pageCount: 3,
      pdfVersion: '1.7',
      encrypted: false,
      passwordRequired: false,
      linearized: false,
      title: 'Quarterly report',
      author: 'Ada Lovelace',
      // pdf-lib writes keywords separated by spaces: as the PDF has them.
      keywords: 'report q3',
      creator: 'pdf-lib (https://github.com/Hopding/pdf-lib)',
      producer: 'pdf-lib (https://github.com/Hopding/pdf-lib)',
      created: '2026-07-01T09:30:00Z',
      modified: '2026-07-02T10:00:00Z',
    })
    expect(await jobOutputs(res.body)).toEqual([])
  })

  it('tells a linearized PDF, one encrypted with permissions only, and one that needs a password', async () => {
    const plain = await makePdf(2)
    const run = async (name: string, bytes: Buffer) => {
      const res = await api('POST', '/v1/utilities/pdf-info', {
        key: inputs.key,
        body: { input: { url: files.add(name, bytes) } },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      return res.body.result
    }
    expect(await run('fast.pdf', qpdfMade(plain, ['--linearize']))).toMatchObject({
      pageCount: 2,
      linearized: true,
      encrypted: false,
    })
    // An owner password restricts what readers allow; anyone can still open it.
    expect(
      await run('restricted.pdf', qpdfMade(plain, ['--encrypt', '', 'owner-secret', '256', '--print=none', '--'])),
    ).toMatchObject({ pageCount: 2, encrypted: true, passwordRequired: false })
    // A user password: nothing but that can be read, and that is the answer, not a failure.
    const locked = await run('locked.pdf', hostile('encrypted.pdf'))
    expect(locked).toMatchObject({ files: [], encrypted: true, passwordRequired: true })
    expect(locked.pageCount).toBeUndefined()
  })

  it('stores the bookmarks when asked, as a tree of titles and pages', async () => {
    const url = files.add('outlined.pdf', await outlinedPdf())
    const res = await api('POST', '/v1/utilities/pdf-info', {
      key: inputs.key,
      body: { input: { url, bookmarks: true } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result).toMatchObject({ pageCount: 2, bookmarkCount: 3 })
    expect(res.body.result.files).toHaveLength(1)
    const [file] = res.body.result.files
    expect(file).toMatchObject({ name: 'bookmarks.json', contentType: 'application/json' })
    expect(JSON.parse((await download(file.url)).bytes.toString('utf8'))).toEqual([
      { title: 'Chapter ✓', page: 1, children: [{ title: 'Section', page: 2 }] },
      { title: 'Elsewhere', page: null },
    ])
  })

  it.each([
    ['truncated.pdf', 'not a PDF qpdf can read'],
    ['not-a-pdf.pdf', 'not a PDF qpdf can read'],
  ])('given %s, the run fails as upstream_rejected (%s)', async (fixture, why) => {
    const url = files.add(`info-${fixture}`, hostile(fixture))
    const res = await api('POST', '/v1/utilities/pdf-info', { key: inputs.key, body: { input: { url } } })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ status: 'failed', result: null, error: { code: 'upstream_rejected' } })
    expect(res.body.error.message).toContain(why)
    expect(res.body.error.message).not.toContain('/tmp')
  })

  it('refuses anything but the PDF before any job', async () => {
    const url = files.add('plain-info.pdf', await makePdf(1))
    const res = await api('POST', '/v1/utilities/pdf-info', { key: inputs.key, body: { input: { url, pages: '1' } } })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
  })

  it('takes the PDF in one multipart call and answers its facts', async () => {
    const body = new FormData()
    body.append('file', new Blob([await makePdf(5)]), 'scan.pdf')
    const res = await fetch(`${inject('gatewayUrl')}/v1/utilities/pdf-info`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${inputs.key}` },
      body,
    })
    expect(res.status, await res.clone().text()).toBe(200)
    const job = (await res.json()) as { utility: string; result: { pageCount: number; files: unknown[] } }
    expect(job).toMatchObject({ utility: 'pdf-info', result: { pageCount: 5, files: [] } })
  })
})
