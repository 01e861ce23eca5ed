import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { api, download } from './helpers/api.js'
import { runnerPods } from './helpers/keys.js'
import { hostile, officeDocument } from '../support/fixtures.js'
import { hostProcesses } from '../support/host-processes.js'
import {
  docxWithEntities,
  docxWithImage,
  docxWithLinkedImage,
  noisePng,
  odtWithLinkedImage,
  workbookOfFormulas,
} from '../support/office-documents.js'
import { jobOutputs } from './helpers/storage.js'
import { jobInputs } from './helpers/job-inputs.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'
import { REPO_ROOT } from '../platform/platform.js'
import { verapdf } from '../support/verapdf.js'

const inputs = jobInputs()
const { files } = inputs
const scratch = mkdtempSync(join(tmpdir(), 'office-pdf-test-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const OFFICE_TYPE = 'application/octet-stream'
const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'documents')

/** What poppler reads of a PDF: the text of its first page, and its page size in points. */
function readPdf(bytes: Uint8Array): { firstPage: string; width: number; height: number } {
  const path = join(scratch, `${Math.random()}.pdf`)
  writeFileSync(path, bytes)
  const firstPage = execFileSync('pdftotext', ['-f', '1', '-l', '1', path, '-'], { encoding: 'utf8' })
  const info = execFileSync('pdfinfo', [path], { encoding: 'utf8' })
  const [width, height] = /Page size: +([\d.]+) x ([\d.]+)/.exec(info)!.slice(1).map(Number)
  return { firstPage, width, height }
}

/**
 * LibreOffice's processes (`soffice.bin`) on this machine outside a kubelet's pods, as pid and
 * start time (a pid reused is another process). The dev node agent runs this platform's pods as
 * host processes; the real-node tier, which may run at the same time, keeps warm LibreOffices in
 * its pool pods, all in the kubelet's `kubepods` cgroups. A process keeps its cgroup when it is
 * orphaned, so an orphan of this platform's runner is still counted.
 */
function officeProcesses(): string[] {
  return hostProcesses(({ command, cgroup }) => command === 'soffice.bin' && !cgroup.includes('/kubepods'))
    .filter((p) => p.state !== 'Z')
    .map((p) => `${p.pid}:${p.startTicks}`)
}

/**
 * A 2 MB document LibreOffice takes minutes to lay out: an RTF table of 20,000 rows (3 min 16 s
 * for `soffice --convert-to pdf` on the 2-core test machine).
 */
function longTable(): Buffer {
  const rows = Array.from(
    { length: 20_000 },
    (_, i) =>
      `\\trowd\\cellx3000\\cellx6000\\cellx9000 \\intbl Row ${i} a\\cell \\intbl b ${i}\\cell \\intbl c\\cell\\row `,
  )
  return Buffer.from(`{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Liberation Serif;}}\\f0\\fs20 ${rows.join('')}}`)
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

  it('converts flat OpenDocument told by its content: a text with an embedded picture, a sheet, slides', async () => {
    for (const [fixture, format, pages] of [
      ['picture.fodt', 'fodt', 1],
      ['sheets.fods', 'fods', 3],
      ['slides.fodp', 'fodp', 3],
    ] as const) {
      const res = await run({ url: files.add(`flat-${fixture}`, officeDocument(fixture), OFFICE_TYPE) })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.result).toMatchObject({ pageCount: pages, format })
      const got = await download(res.body.result.files[0].url)
      expect(readPdf(got.bytes).firstPage).toContain('dutil office fixture')
      if (format === 'fodt') {
        const path = join(scratch, 'picture.pdf')
        writeFileSync(path, got.bytes)
        // pdfimages lists a header of two lines, then one line per image.
        const images = execFileSync('pdfimages', ['-list', path], { encoding: 'utf8' }).trim().split('\n').slice(2)
        expect(images.length).toBeGreaterThanOrEqual(1)
      }
    }
    const laughs = Buffer.concat([
      Buffer.from('<?xml version="1.0"?><!DOCTYPE office:document [<!ENTITY a "ha">]>'),
      officeDocument('text.fodt').subarray('<?xml version="1.0" encoding="UTF-8"?>'.length),
    ])
    const refused = await run({ url: files.add('entities.fodt', laughs, OFFICE_TYPE) })
    expect(refused.status).toBe(422)
    expect(refused.body.error).toEqual({
      code: 'upstream_rejected',
      message: 'The document is refused: its XML declares a DTD (entities), which no OpenDocument file needs.',
    })
  })

  it('converts UTF-8 text named .txt as prose and .csv as a sheet whose cells are printed as written, never evaluated', async () => {
    const beacon = '/files/csv-beacon'
    const csv = `item,amount,note\nwidget,=WEBSERVICE("${files.url}${beacon}"),"a, quoted note"\ngadget,=1+1,\n`
    const sheet = await run({ url: files.add('table.csv', Buffer.from(csv), 'text/csv') })
    expect(sheet.status, JSON.stringify(sheet.body)).toBe(200)
    expect(sheet.body.result).toMatchObject({ pageCount: 1, format: 'csv' })
    const table = readPdf((await download(sheet.body.result.files[0].url)).bytes).firstPage
    expect(table).toContain('=WEBSERVICE(')
    expect(table).toContain('=1+1')
    expect(table).toContain('a, quoted note')
    expect(files.requested).not.toContain(beacon)

    const text = await run({
      url: files.add('notes.txt', Buffer.from('dutil plain text, line one\nÄrger über Umlaute\n'), 'text/plain'),
    })
    expect(text.status, JSON.stringify(text.body)).toBe(200)
    expect(text.body.result).toMatchObject({ pageCount: 1, format: 'txt' })
    const prose = readPdf((await download(text.body.result.files[0].url)).bytes).firstPage
    expect(prose).toContain('dutil plain text, line one')
    expect(prose).toContain('Ärger über Umlaute')

    const unnamed = await run({ url: files.add('notes.md', Buffer.from('# a heading\n'), 'text/plain') })
    expect(unnamed.status).toBe(422)
    expect(unnamed.body.error.message).toMatch(/^The file is not an office document this utility converts/)
    expect(unnamed.body.error.message).toContain('text only named .txt or .csv')
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
    // The claim holds: the PDF Association's validator passes it.
    expect(await verapdf(Buffer.from(got.bytes))).toEqual({ compliant: true, level: '2b', failed: [] })
  })

  it("takes the PDF export's options: a picture scaled down and compressed, the rest refused before any job exists when invalid", async () => {
    const url = files.add('options.fodt', officeDocument('picture.fodt'), OFFICE_TYPE)
    const [kept, small] = await Promise.all([
      run({ url }),
      run({ url, imageQuality: 10, maxImageResolution: 75, exportBookmarks: false, exportFormFields: false }),
    ])
    expect(small.status, JSON.stringify(small.body)).toBe(200)
    expect(small.body.result).toMatchObject({ pageCount: 1, format: 'fodt' })
    expect(small.body.result.files[0].size).toBeLessThan(kept.body.result.files[0].size)
    for (const [bad, path] of [
      [{ maxImageResolution: 100 }, 'input.maxImageResolution'],
      [{ imageQuality: 0 }, 'input.imageQuality'],
      [{ exportNotes: 'yes' }, 'input.exportNotes'],
    ] as const) {
      const res = await run({ url, ...bad })
      expect(res.status, JSON.stringify(bad)).toBe(400)
      expect(JSON.stringify(res.body.error.details)).toContain(path)
    }
  })

  it('refuses page ranges LibreOffice does not understand before any job exists', async () => {
    const res = await run({ url: files.url + '/files/none.docx', pageRanges: '3-1;x' })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(JSON.stringify(res.body.error.details)).toContain('input.pageRanges')
  })

  it.each([
    ['encrypted.odt', 'send its password'],
    ['encrypted.doc', 'send its password'],
  ])('given %s, fails once as upstream_rejected (%s), with no retry and no output', async (fixture, why) => {
    const res = await run({ url: files.add(`office-${fixture}`, officeDocument(fixture), OFFICE_TYPE) })
    expect(res.status).toBe(422)
    expect(res.body.error.code).toBe('upstream_rejected')
    expect(res.body.error.message).toContain(why)
    expect(await jobOutputs(res.body)).toEqual([])
    expect(await runnerPods(res.body.id)).toBe(1)
  })

  it('opens a protected docx, xlsx, pptx, odt, doc and xls with its password, converts what is inside, and refuses one without it or with a wrong one', async () => {
    const docx = files.add('protected.docx', officeDocument('encrypted.docx'), OFFICE_TYPE)
    const opened = await run({ url: docx, password: 'dutil' })
    expect(opened.status, JSON.stringify(opened.body)).toBe(200)
    expect(opened.body.result).toMatchObject({ pageCount: 1, format: 'docx' })
    expect(JSON.stringify(opened.body)).not.toContain('"dutil"')
    const pdf = (await download(opened.body.result.files[0].url)).bytes
    expect(readPdf(pdf).firstPage).toContain('dutil office fixture, page 1')
    for (const [fixture, format] of [
      ['encrypted.xlsx', 'xlsx'],
      ['encrypted.pptx', 'pptx'],
    ]) {
      const res = await run({
        url: files.add(`protected-${fixture}`, officeDocument(fixture), OFFICE_TYPE),
        password: 'dutil',
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.result.format).toBe(format)
    }
    const without = await run({ url: docx })
    expect(without.status).toBe(422)
    expect(without.body.error).toMatchObject({
      code: 'upstream_rejected',
      message: 'The document is protected by a password: send its password as `password`.',
    })
    const wrong = await run({ url: docx, password: 'not it' })
    expect(wrong.status).toBe(422)
    expect(wrong.body.error).toMatchObject({
      code: 'upstream_rejected',
      message: 'The password given does not open the document.',
    })
    expect(await jobOutputs(wrong.body)).toEqual([])
    // A protected OpenDocument file opens with its password too, and asks for it without; a
    // password a document does not need goes unused.
    const odtUrl = files.add('protected.odt', officeDocument('encrypted.odt'), OFFICE_TYPE)
    const odt = await run({ url: odtUrl, password: 'dutil' })
    expect(odt.status, JSON.stringify(odt.body)).toBe(200)
    expect(odt.body.result).toMatchObject({ pageCount: 1, format: 'odt' })
    expect(readPdf((await download(odt.body.result.files[0].url)).bytes).firstPage).toContain(
      'dutil office fixture, page 1',
    )
    expect((await run({ url: odtUrl })).body.error.message).toBe(
      'The document is protected by a password: send its password as `password`.',
    )
    expect((await run({ url: odtUrl, password: 'not it' })).body.error.message).toBe(
      'The password given does not open the document.',
    )
    // A protected Word or Excel 97–2003 file: its password checked by the runner, LibreOffice
    // decrypts it.
    for (const [fixture, format, text] of [
      ['encrypted.doc', 'doc', 'dutil office fixture, page 1'],
      ['encrypted.xls', 'xls', 'dutil office fixture, sheet Summary'],
    ]) {
      const url = files.add(`protected-${fixture}`, officeDocument(fixture), OFFICE_TYPE)
      const legacy = await run({ url, password: 'dutil' })
      expect(legacy.status, JSON.stringify(legacy.body)).toBe(200)
      expect(legacy.body.result.format).toBe(format)
      expect(readPdf((await download(legacy.body.result.files[0].url)).bytes).firstPage).toContain(text)
      const refused = await run({ url, password: 'not it' })
      expect(refused.body.error).toMatchObject({
        code: 'upstream_rejected',
        message: 'The password given does not open the document.',
      })
      expect(await jobOutputs(refused.body)).toEqual([])
      expect((await run({ url })).body.error.message).toBe(
        'The document is protected by a password: send its password as `password`.',
      )
    }
    const plain = await run({
      url: files.add('plain.docx', officeDocument('text.docx'), OFFICE_TYPE),
      password: 'dutil',
    })
    expect(plain.status, JSON.stringify(plain.body)).toBe(200)
  })

  it('refuses a document whose embedded workbook is a decompression bomb, as upstream_rejected naming the part', async () => {
    const bomb = writeZip([
      fileEntry('[Content_Types].xml', Buffer.from('<Types/>')),
      fileEntry('xl/workbook.xml', Buffer.alloc(64 * 1024 ** 2, 0x20)),
    ])
    const docx = writeZip([
      fileEntry('[Content_Types].xml', Buffer.from('<Types/>')),
      fileEntry('word/document.xml', Buffer.from('<w:document/>')),
      fileEntry('word/embeddings/Microsoft_Excel_Worksheet.xlsx', bomb, 0),
    ])
    const res = await run({ url: files.add('nested-bomb.docx', docx, OFFICE_TYPE) })
    expect(res.status).toBe(422)
    expect(res.body.error.code).toBe('upstream_rejected')
    expect(res.body.error.message).toContain('its part xl/workbook.xml expands more than 1000 times')
    expect(await jobOutputs(res.body)).toEqual([])
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

  it('kills a LibreOffice still converting at the deadline: 504 upstream_timeout, and none of its processes is left', async () => {
    const before = new Set(officeProcesses())
    const answer = api('POST', '/v1/utilities/office-pdf', {
      key: inputs.key,
      body: { input: { url: files.add('long-table.rtf', longTable(), OFFICE_TYPE) } },
      headers: { 'Dutil-Test-Deadline-Seconds': '8' },
    })
    // The job's LibreOffice starts (on a new profile it starts once more, as another process).
    const started = () => officeProcesses().filter((p) => !before.has(p))
    await expect.poll(() => started().length, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0)
    const res = await answer
    expect(res.status, JSON.stringify(res.body)).toBe(504)
    expect(res.body).toMatchObject({ status: 'failed', error: { code: 'upstream_timeout' } })
    expect(res.body.error.message).toContain('8 s')
    // Its runner was stopped at the deadline, and its LibreOffice with it, mid-conversion.
    await expect.poll(started, { timeout: 20_000 }).toEqual([])
  })

  it('never runs a document’s macros: a document whose macro runs when LibreOffice opens it with macros allowed converts, and its macro leaves no mark', async () => {
    // Where the fixture's macro writes (test/fixtures/documents/generate.py): the runner is a host
    // process on this tier, so its /tmp is this one.
    const mark = '/tmp/dutil-office-macro-ran'
    rmSync(mark, { force: true })
    // The control: LibreOffice with macros allowed runs it.
    execFileSync('/usr/bin/python3', [join(FIXTURES, 'open-permissive.py'), join(FIXTURES, 'macro.odt')], {
      timeout: 60_000,
    })
    expect(readFileSync(mark, 'utf8')).toContain("the document's macro ran")
    rmSync(mark, { force: true })
    const res = await run({ url: files.add('macro.odt', officeDocument('macro.odt'), OFFICE_TYPE) })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result).toMatchObject({ pageCount: 1, format: 'odt' })
    expect(readPdf((await download(res.body.result.files[0].url)).bytes).firstPage).toContain(
      'dutil office fixture, page 1',
    )
    expect(existsSync(mark)).toBe(false)
  })

  // This test and the next each keep one LibreOffice busy for seconds: they run side by side.
  it.concurrent(
    'given a workbook of a million formula cells, computes and lays it out, then refuses the 3,704 pages past the limit: 422 within the time limit',
    async () => {
      const workbook = workbookOfFormulas(100_000, 10)
      const res = await run({ url: files.add('formulas.xlsx', workbook, OFFICE_TYPE) })
      expect(res.status, JSON.stringify(res.body)).toBe(422)
      expect(res.body.error).toEqual({
        code: 'upstream_rejected',
        message: expect.stringMatching(/^The document converts to \d+ pages; at most 2000 are allowed\.$/),
      })
      expect(Number(/converts to (\d+) pages/.exec(res.body.error.message)![1])).toBeGreaterThan(2000)
      expect(res.body.result).toBeNull()
      expect(res.body.timings.totalMs).toBeLessThan(300_000)
      expect(await runnerPods(res.body.id)).toBe(1)
    },
  )

  it.concurrent(
    'converts a .docx carrying a 94 MB image (under the 100 MB limit) to a one-page PDF; one past the limit is refused unread',
    async () => {
      // 5,600 × 5,600 random pixels: 94 MB that no compression shrinks, every one decoded; with 12 MiB
      // more after its end, the document is past the limit (100 MiB).
      const image = noisePng(5_600)
      const res = await run({ url: files.add('large-image.docx', docxWithImage(image), OFFICE_TYPE) })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.result).toMatchObject({ pageCount: 1, format: 'docx' })
      const pdf = await download(res.body.result.files[0].url)
      expect(readPdf(pdf.bytes).firstPage).toContain('dutil office fixture, large image')

      const over = await run({
        url: files.add(
          'larger-image.docx',
          docxWithImage(Buffer.concat([image, Buffer.alloc(12 * 1024 ** 2)])),
          OFFICE_TYPE,
        ),
      })
      expect(over.status, JSON.stringify(over.body)).toBe(422)
      expect(over.body.error.code).toBe('upstream_rejected')
      expect(over.body.error.message).toMatch(/100 MB/)
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
