import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { conversionFailure, officeRequest } from './handler.js'
import { Office, officeEnv, type OfficeGuard } from './office.js'
import { docxWithLinkedImage, odtWithLinkedImage } from '../../test/support/office-documents.js'
import { countPdfPages } from './page-count.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const work = mkdtempSync(join(tmpdir(), 'office-test-'))
const fixture = (name: string) => {
  const path = join(work, name)
  copyFileSync(join(REPO, 'test', 'fixtures', 'documents', name), path)
  return path
}
/** The text of a PDF's first page (poppler's pdftotext). */
const firstPageText = (pdf: string) => execFileSync('pdftotext', ['-f', '1', '-l', '1', pdf, '-'], { encoding: 'utf8' })
/** A 1×1 PNG, what a linked image's server answers. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
)
const fonts = (pdf: string) => execFileSync('pdffonts', [pdf], { encoding: 'utf8' })

describe('officeRequest and conversionFailure', () => {
  it('asks LibreOffice for what the input says', () => {
    expect(officeRequest({ url: 'x' }, '/in.docx', '/out.pdf', 'docx')).toEqual({
      input: '/in.docx',
      output: '/out.pdf',
      landscape: false,
      pdfVersion: 0,
      pdfua: false,
    })
    expect(
      officeRequest(
        { url: 'x', pageRanges: '1-3,5', landscape: true, pdfa: 'PDF/A-2b', pdfua: true },
        '/i',
        '/o',
        'odt',
      ),
    ).toEqual({ input: '/i', output: '/o', pageRange: '1-3,5', landscape: true, pdfVersion: 2, pdfua: true })
    // A password reaches LibreOffice for the formats it decrypts itself, never for the others
    // (decrypted before: handler.ts unprotected).
    for (const format of ['doc', 'xls'] as const)
      expect(officeRequest({ url: 'x', password: 's3cret' }, '/i', '/o', format).password).toBe('s3cret')
    for (const format of ['docx', 'xlsx', 'pptx', 'odt', 'rtf', 'ppt'] as const)
      expect(officeRequest({ url: 'x', password: 's3cret' }, '/i', '/o', format)).not.toHaveProperty('password')
    expect(
      officeRequest(
        {
          url: 'x',
          imageQuality: 50,
          maxImageResolution: 150,
          losslessImages: false,
          exportBookmarks: false,
          exportNotes: true,
          exportFormFields: false,
          singlePageSheets: true,
        },
        '/i',
        '/o',
        'docx',
      ),
    ).toMatchObject({
      imageQuality: 50,
      maxImageResolution: 150,
      losslessImages: false,
      exportBookmarks: false,
      exportNotes: true,
      exportFormFields: false,
      singlePageSheets: true,
    })
  })

  it("classifies LibreOffice's failures: the document's are upstream_rejected, LibreOffice's own upstream_error", () => {
    const req = { input: '/i', output: '/o' }
    expect(conversionFailure({ ok: true, family: 'text', ms: 1 }, req)).toBeNull()
    expect(conversionFailure({ ok: false, reason: 'password', message: '' }, req)).toMatchObject({
      code: 'upstream_rejected',
      message: 'The document is protected by a password: send its password as `password`.',
    })
    expect(conversionFailure({ ok: false, reason: 'password', message: '' }, { ...req, password: 'x' })).toMatchObject({
      code: 'upstream_rejected',
      message: 'The password given does not open the document.',
    })
    expect(conversionFailure({ ok: false, reason: 'load', message: '' }, req)?.message).toBe(
      'The document could not be opened: it is damaged, or protected by a password.',
    )
    expect(conversionFailure({ ok: false, reason: 'export', message: '' }, req)?.code).toBe('upstream_rejected')
    expect(conversionFailure({ ok: false, reason: 'office', message: '' }, req)?.code).toBe('upstream_error')
  })

  it('gives LibreOffice an environment of its own: no credentials, its profile as HOME', () => {
    const env = officeEnv('/tmp/p', {
      PATH: '/bin',
      DUTIL_STORAGE_SECRET_KEY: 's',
      AWS_SECRET_ACCESS_KEY: 'a',
      LANG: 'C',
    })
    expect(env).toEqual({ PATH: '/bin', LANG: 'C', HOME: '/tmp/p', TMPDIR: '/tmp/p', SAL_DISABLE_JAVA: '1' })
    expect(officeEnv('/tmp/p', {}).PATH).toBe('/usr/local/bin:/usr/bin:/bin')
  })
})

describe.skipIf(!existsSync('/usr/bin/soffice'))('one LibreOffice converting one document after another', () => {
  let office: Office
  let profile: string
  beforeAll(async () => {
    profile = mkdtempSync(join(work, 'profile-'))
    office = await Office.start(profile, `dutil-office-test-${process.pid}`)
  }, 60_000)
  afterAll(async () => {
    await office?.stop()
    rmSync(work, { recursive: true, force: true })
  })

  it.each([
    ['text.docx', 'text', 1],
    ['text.doc', 'text', 1],
    ['text.odt', 'text', 1],
    ['text.rtf', 'text', 1],
    ['three-pages.docx', 'text', 3],
    ['sheets.xlsx', 'spreadsheet', 3],
    ['sheets.xls', 'spreadsheet', 3],
    ['sheets.ods', 'spreadsheet', 3],
    ['slides.pptx', 'presentation', 3],
    ['slides.ppt', 'presentation', 3],
    ['slides.odp', 'presentation', 3],
  ])(
    'converts %s (%s) to a PDF of %i pages, its fonts embedded and its text on page 1',
    async (name, family, pages) => {
      const output = join(work, `${name}.pdf`)
      const answer = await office.convert({ input: fixture(name), output })
      expect(answer).toMatchObject({ ok: true, family })
      expect(await countPdfPages(output)).toBe(pages)
      expect(firstPageText(output)).toMatch(/dutil office fixture, (page 1|sheet Summary|slide 1)/)
      // Every font of the PDF is embedded ("emb" column: yes).
      const rows = fonts(output).trim().split('\n').slice(2)
      expect(rows.length).toBeGreaterThan(0)
      for (const row of rows) expect(row, row).toMatch(/ yes +(yes|no) +(yes|no) +\d+ +\d+$/)
    },
  )

  it.each([
    ['encrypted.doc', 'text', /dutil office fixture, page 1/],
    ['encrypted.xls', 'spreadsheet', /dutil office fixture, sheet Summary/],
  ])(
    'opens %s with its password (%s), not with a wrong one or none, and keeps no password in its profile',
    async (name, family, text) => {
      const output = join(work, `${name}.pdf`)
      expect(await office.convert({ input: fixture(name), output, password: 'dutil' })).toMatchObject({
        ok: true,
        family,
      })
      expect(firstPageText(output)).toMatch(text)
      // LibreOffice cannot tell a wrong password from damage (the runner checks the password first).
      for (const password of ['not it', undefined])
        expect(
          await office.convert({ input: fixture(name), output: join(work, 'refused.pdf'), password }),
        ).toMatchObject({ ok: false })
      // Nothing of LibreOffice's profile (its settings, history, caches) holds either password.
      for (const password of ['dutil', 'not it'])
        expect(spawnSync('grep', ['-rlaF', password, profile], { encoding: 'utf8' }).stdout).toBe('')
    },
  )

  it('converts the page ranges asked for, landscape, as PDF/A-2b', async () => {
    const output = join(work, 'ranges.pdf')
    const answer = await office.convert({
      input: fixture('three-pages.docx'),
      output,
      pageRange: '2-3',
      landscape: true,
      pdfVersion: 2,
    })
    expect(answer.ok).toBe(true)
    expect(await countPdfPages(output)).toBe(2)
    expect(firstPageText(output)).toContain('dutil office fixture, page 2')
    const info = execFileSync('pdfinfo', [output], { encoding: 'utf8' })
    const [w, h] = /Page size: +([\d.]+) x ([\d.]+)/.exec(info)!.slice(1).map(Number)
    expect(w).toBeGreaterThan(h)
    expect(readFileSync(output, 'latin1')).toMatch(/pdfaid:part>2</)
  })

  it("scales and compresses a document's pictures as asked: lower resolution, lower JPEG quality, a smaller PDF", async () => {
    /** Each picture's width and height in pixels, as pdfimages lists them (two header lines first). */
    const pictures = (pdf: string) =>
      execFileSync('pdfimages', ['-list', pdf], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .slice(2)
        .map((l) => l.trim().split(/\s+/).slice(3, 5).map(Number))
    const kept = join(work, 'picture-kept.pdf')
    const small = join(work, 'picture-small.pdf')
    expect((await office.convert({ input: fixture('picture.fodt'), output: kept })).ok).toBe(true)
    const answer = await office.convert(
      officeRequest({ url: 'x', imageQuality: 10, maxImageResolution: 75 }, fixture('picture.fodt'), small, 'fodt'),
    )
    expect(answer.ok).toBe(true)
    const [[w0, h0]] = pictures(kept)
    const [[w1, h1]] = pictures(small)
    expect([w0, h0]).toEqual([400, 300])
    expect(w1).toBeLessThan(w0)
    expect(h1).toBeLessThan(h0)
    expect(readFileSync(small).length).toBeLessThan(readFileSync(kept).length)
  })

  it('answers "load" for a document LibreOffice cannot open, and goes on converting', async () => {
    const broken = join(work, 'broken.docx')
    copyFileSync(join(REPO, 'test', 'fixtures', 'documents', 'encrypted.odt'), broken)
    expect(await office.convert({ input: broken, output: join(work, 'broken.pdf') })).toMatchObject({
      ok: false,
      reason: 'load',
    })
    expect((await office.convert({ input: fixture('text.docx'), output: join(work, 'again.pdf') })).ok).toBe(true)
  })

  it('answers "office" once LibreOffice is killed, as for a conversion it died in', async () => {
    const doomed = await Office.start(mkdtempSync(join(work, 'profile-')), `dutil-office-doomed-${process.pid}`)
    doomed.kill()
    await doomed.exited
    expect(doomed.alive).toBe(false)
    expect(await doomed.convert({ input: fixture('text.docx'), output: join(work, 'never.pdf') })).toMatchObject({
      ok: false,
      reason: 'office',
    })
  }, 60_000)
})

describe.skipIf(!existsSync('/usr/bin/soffice'))('content a document links to', () => {
  // A directory of its own: the describe above removes `work` when it ends.
  const dir = mkdtempSync(join(tmpdir(), 'office-links-'))
  /** A loopback server that counts what LibreOffice asks it for. */
  let server: Server
  const asked: string[] = []
  let base = ''
  beforeAll(async () => {
    server = createServer((req, res) => {
      asked.push(req.url ?? '')
      res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG)
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()))
    rmSync(dir, { recursive: true, force: true })
  })

  // With no guard LibreOffice fetches a linked picture; the update modes of links and of the load
  // do not govern pictures (they hold linked sections, fields and sheets), so two guards that do
  // stand between a picture and the network, each enough alone.
  it.each([
    [[], true],
    [['links', 'load'], true],
    [['referer'], false],
    [['proxy'], false],
  ] as Array<[OfficeGuard[], boolean]>)(
    'a linked picture is fetched with the guards %j: %s',
    async (guards, fetched) => {
      const office = await Office.start(
        mkdtempSync(join(dir, 'profile-')),
        `dutil-office-guards-${process.pid}-${guards.join('-')}`,
        guards,
      )
      try {
        for (const [ext, make] of [
          ['docx', docxWithLinkedImage],
          ['odt', odtWithLinkedImage],
        ] as const) {
          const beacon = `/beacon-${guards.join('-') || 'none'}.${ext}.png`
          const input = join(dir, `linked-${guards.join('-')}.${ext}`)
          writeFileSync(input, make(`${base}${beacon}`))
          const answer = await office.convert({ input, output: `${input}.pdf` })
          expect(answer, ext).toMatchObject({ ok: true })
          expect(asked.includes(beacon), ext).toBe(fetched)
        }
      } finally {
        await office.stop()
      }
    },
  )
})
