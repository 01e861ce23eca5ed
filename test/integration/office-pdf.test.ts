import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { api, download } from './helpers/api.js'
import { runnerPods } from './helpers/keys.js'
import { hostile, officeDocument } from '../support/fixtures.js'
import { docxWithEntities, docxWithLinkedImage, odtWithLinkedImage } from '../support/office-documents.js'
import { jobOutputs } from './helpers/storage.js'
import { jobInputs } from './helpers/job-inputs.js'

const inputs = jobInputs()
const { files } = inputs
const scratch = mkdtempSync(join(tmpdir(), 'office-pdf-test-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const OFFICE_TYPE = 'application/octet-stream'

/** What poppler reads of a PDF: the text of its first page, and its page size in points. */
function readPdf(bytes: Uint8Array): { firstPage: string; width: number; height: number } {
  const path = join(scratch, `${Math.random()}.pdf`)
  writeFileSync(path, bytes)
  const firstPage = execFileSync('pdftotext', ['-f', '1', '-l', '1', path, '-'], { encoding: 'utf8' })
  const info = execFileSync('pdfinfo', [path], { encoding: 'utf8' })
  const [width, height] = /Page size: +([\d.]+) x ([\d.]+)/.exec(info)!.slice(1).map(Number)
  return { firstPage, width, height }
}

const run = (input: Record<string, unknown>) =>
  api('POST', '/v1/utilities/office-pdf', { key: inputs.key, body: { input } })

describe('office-pdf through the whole platform', () => {
  it('given a .docx, a sync run answers 200 with one PDF of its page, its text on page 1', async () => {
    const res = await run({ url: files.add('report.docx', officeDocument('text.docx'), OFFICE_TYPE) })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ utility: 'office-pdf', status: 'succeeded', error: null })
    expect(res.body.result).toMatchObject({ pageCount: 1, format: 'docx' })
    const [file] = res.body.result.files
    expect(file).toMatchObject({ name: 'report.pdf', contentType: 'application/pdf' })
    expect(file.key).toBe(`office-pdf/${res.body.createdAt.slice(0, 10)}/${res.body.id}/report.pdf`)
    const got = await download(file.url)
    expect(got.status).toBe(200)
    expect(got.bytes.length).toBe(file.size)
    expect(readPdf(got.bytes).firstPage).toContain('dutil office fixture, page 1')
  })

  it('tells a spreadsheet and a presentation by their content, whatever their names say', async () => {
    for (const [fixture, format] of [
      ['sheets.xlsx', 'xlsx'],
      ['slides.odp', 'odp'],
    ]) {
      const res = await run({ url: files.add(`misnamed-${fixture}.pdf`, officeDocument(fixture), OFFICE_TYPE) })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.result).toMatchObject({ pageCount: 3, format })
    }
  })

  it('converts the page ranges asked for, landscape, as PDF/A-2b', async () => {
    const res = await run({
      url: files.add('three-pages.docx', officeDocument('three-pages.docx'), OFFICE_TYPE),
      pageRanges: '2-3',
      landscape: true,
      pdfa: 'PDF/A-2b',
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result.pageCount).toBe(2)
    const got = await download(res.body.result.files[0].url)
    const pdf = readPdf(got.bytes)
    expect(pdf.firstPage).toContain('dutil office fixture, page 2')
    expect(pdf.width).toBeGreaterThan(pdf.height)
    expect(Buffer.from(got.bytes).toString('latin1')).toMatch(/pdfaid:part>2</)
  })

  it('refuses page ranges LibreOffice does not understand before any job exists', async () => {
    const res = await run({ url: files.url + '/files/none.docx', pageRanges: '3-1;x' })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(JSON.stringify(res.body.error.details)).toContain('input.pageRanges')
  })

  it.each([
    ['encrypted.odt', 'protected by a password'],
    ['encrypted.doc', 'protected by a password'],
  ])('given %s, fails once as upstream_rejected (%s), with no retry and no output', async (fixture, why) => {
    const res = await run({ url: files.add(`office-${fixture}`, officeDocument(fixture), OFFICE_TYPE) })
    expect(res.status).toBe(422)
    expect(res.body.error.code).toBe('upstream_rejected')
    expect(res.body.error.message).toContain(why)
    expect(await jobOutputs(res.body)).toEqual([])
    expect(await runnerPods(res.body.id)).toBe(1)
  })

  it('refuses a file that is no office document, named .docx, as upstream_rejected', async () => {
    const res = await run({ url: files.add('page.docx', hostile('not-a-pdf.pdf'), OFFICE_TYPE) })
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({ code: 'upstream_rejected' })
    expect(res.body.error.message).toMatch(/^The file is not an office document this utility converts/)
    expect(await runnerPods(res.body.id)).toBe(1)
  })

  it.each([
    ['docx', docxWithLinkedImage],
    ['odt', odtWithLinkedImage],
  ])(
    'converts a .%s whose image links to a server without fetching it: the server sees no request',
    async (ext, make) => {
      const beacon = `/files/beacon-${ext}.png`
      const res = await run({ url: files.add(`linked.${ext}`, make(`${files.url}${beacon}`), OFFICE_TYPE) })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(readPdf((await download(res.body.result.files[0].url)).bytes).firstPage).toContain(
        'dutil office fixture, linked image',
      )
      expect(files.requested).toContain(`/files/linked.${ext}`)
      expect(files.requested).not.toContain(beacon)
    },
  )

  it('refuses a .docx whose XML declares an external entity and the billion laughs: 422 at once, the entity never fetched', async () => {
    const beacon = '/files/entity.txt'
    const res = await run({ url: files.add('entities.docx', docxWithEntities(`${files.url}${beacon}`), OFFICE_TYPE) })
    expect(res.status, JSON.stringify(res.body)).toBe(422)
    expect(res.body.error).toMatchObject({
      code: 'upstream_rejected',
      message: 'The document could not be opened: it is damaged, or protected by a password.',
    })
    expect(files.requested).toContain('/files/entities.docx')
    expect(files.requested).not.toContain(beacon)
    expect(await runnerPods(res.body.id)).toBe(1)
  })
})
