import { describe, expect, it } from 'vitest'
import { cssInches, naturalCompare, parseBool, parseInches } from './form-values.js'
import { type FormFile, FormRefused, planOf } from './plan.js'

const file = (name: string, field = 'files'): FormFile => ({
  field,
  name,
  url: `s3://b/uploads/2026-11-29/f_${name}/${name}`,
})
const fields = (o: Record<string, string> = {}) => new Map(Object.entries(o))
const refusal = (fn: () => unknown) => {
  try {
    fn()
  } catch (err) {
    return err as FormRefused
  }
  throw new Error('not refused')
}

describe('form values as Gotenberg reads them', () => {
  it('reads booleans as Go does and lengths in inches or with a unit', () => {
    expect(parseBool('x', 'True')).toBe(true)
    expect(parseBool('x', '0')).toBe(false)
    expect(() => parseBool('landscape', 'yes')).toThrow(/'landscape' is invalid \(got 'yes'\)/)
    expect(parseInches('m', '1')).toBe(1)
    expect(parseInches('m', '25.4mm')).toBeCloseTo(1)
    expect(parseInches('m', '72pt')).toBeCloseTo(1)
    expect(parseInches('m', '96px')).toBeCloseTo(1)
    expect(parseInches('m', '2.54cm')).toBeCloseTo(1)
    expect(() => parseInches('marginTop', '1em')).toThrow(/'marginTop' is invalid/)
    expect(() => parseInches('marginTop', '-1')).toThrow(/below zero/)
    expect(cssInches(0.39)).toBe('0.39in')
    expect(cssInches(8.5)).toBe('8.5in')
    expect(cssInches(10 / 25.4)).toBe('0.3937in')
    expect(cssInches(0)).toBe('0')
  })

  it('orders names naturally: numbers as numbers', () => {
    const names = ['10.pdf', 'b.pdf', '2.pdf', 'page_10.pdf', 'page_9.pdf', 'a.pdf', '1.pdf']
    expect(names.sort(naturalCompare)).toEqual([
      '1.pdf',
      '2.pdf',
      '10.pdf',
      'a.pdf',
      'b.pdf',
      'page_9.pdf',
      'page_10.pdf',
    ])
  })
})

describe('planOf', () => {
  it("pictures a page with Gotenberg's screenshot defaults: 800 × 600, png, the whole page", () => {
    const plan = planOf('screenshot-html', fields(), [file('index.html'), file('chart.png')])
    expect(plan.runs).toEqual([
      {
        utility: 'html-image',
        input: {
          url: file('index.html').url,
          assets: [{ url: file('chart.png').url, name: 'chart.png' }],
          imageOptions: { format: 'png', width: 800, height: 600, fullPage: true },
        },
        stem: 'index',
        extension: 'png',
      },
    ])
    const url = planOf(
      'screenshot-url',
      fields({
        url: 'https://example.com/',
        format: 'jpeg',
        quality: '40',
        clip: 'true',
        width: '1024',
        deviceScaleFactor: '2',
        omitBackground: 'true',
        optimizeForSpeed: 'true',
        emulatedMediaType: 'print',
        waitDelay: '1s',
      }),
      [],
    )
    expect(url.runs[0]).toEqual({
      utility: 'html-image',
      input: {
        url: 'https://example.com/',
        // clip: the viewport alone; jpeg has no transparency, so omitBackground does nothing, as on Gotenberg.
        imageOptions: {
          format: 'jpeg',
          quality: 40,
          width: 1024,
          height: 600,
          deviceScaleFactor: 2,
          optimizeForSpeed: true,
        },
        media: 'print',
        wait: { delayMs: 1000 },
      },
      stem: 'result',
      extension: 'jpeg',
    })
    const element = planOf(
      'screenshot-url',
      fields({ url: 'https://example.com/', selector: '#chart', quality: '10' }),
      [],
    )
    expect(element.runs[0].input.imageOptions).toEqual({ format: 'png', width: 800, height: 600, selector: '#chart' })
  })

  it('refuses what a screenshot cannot take, naming the field', () => {
    expect(
      refusal(() => planOf('screenshot-url', fields({ url: 'https://example.com/', format: 'gif' }), [])),
    ).toMatchObject({
      field: 'format',
      message: "form field 'format' is invalid (got 'gif'): png, jpeg or webp",
    })
    expect(
      refusal(() => planOf('screenshot-url', fields({ url: 'https://example.com/', width: '5000' }), [])),
    ).toMatchObject({
      field: 'width',
    })
    expect(refusal(() => planOf('screenshot-html', fields({ paperWidth: '8.5' }), [file('index.html')]))).toMatchObject(
      {
        field: 'paperWidth',
      },
    )
    expect(refusal(() => planOf('screenshot-html', fields(), [file('page.html')]))).toMatchObject({
      field: 'index.html',
    })
  })

  it("renders index.html with its other files as assets, on Gotenberg's default paper and margins", () => {
    const plan = planOf('chromium-html', fields(), [file('index.html'), file('logo.png')])
    expect(plan.runs).toEqual([
      {
        utility: 'html-pdf',
        input: {
          url: file('index.html').url,
          assets: [{ url: file('logo.png').url, name: 'logo.png' }],
          pdfOptions: {
            width: '8.5in',
            height: '11in',
            margin: { top: '0.39in', bottom: '0.39in', left: '0.39in', right: '0.39in' },
          },
        },
        stem: 'index',
      },
    ])
  })

  it('maps paper, margins, landscape, background, scale and CSS page size', () => {
    const plan = planOf(
      'chromium-url',
      fields({
        url: 'https://example.test/',
        paperWidth: '210mm',
        paperHeight: '297mm',
        marginTop: '1cm',
        marginLeft: '0',
        landscape: 'true',
        printBackground: 'true',
        scale: '0.8',
        preferCssPageSize: 'false',
      }),
      [],
    )
    expect(plan.runs[0].input).toEqual({
      url: 'https://example.test/',
      pdfOptions: {
        width: '8.2677in',
        height: '11.6929in',
        margin: { top: '0.3937in', bottom: '0.39in', left: '0', right: '0.39in' },
        landscape: true,
        printBackground: true,
        scale: 0.8,
        preferCSSPageSize: false,
      },
    })
  })

  it('maps one single page and an omitted background', () => {
    const plan = planOf('chromium-html', fields({ singlePage: 'true', omitBackground: 'true' }), [file('index.html')])
    expect(plan.runs[0].input.pdfOptions).toMatchObject({ singlePage: true, omitBackground: true })
    expect(refusal(() => planOf('chromium-html', fields({ singlePage: 'maybe' }), [file('index.html')]))).toMatchObject(
      { field: 'singlePage' },
    )
  })

  it("maps pdfa and pdfua onto html-pdf's archival and accessible PDFs, and refuses PDF/A-1b there", () => {
    expect(
      planOf('chromium-html', fields({ pdfa: 'PDF/A-3b', pdfua: 'true' }), [file('index.html')]).runs[0].input,
    ).toMatchObject({ pdfOptions: { pdfa: 'PDF/A-3b', pdfua: true } })
    expect(refusal(() => planOf('chromium-html', fields({ pdfa: 'PDF/A-1b' }), [file('index.html')]))).toMatchObject({
      field: 'pdfa',
      message: expect.stringMatching(/transparency/),
    })
    expect(refusal(() => planOf('chromium-url', fields({ url: 'https://x.test/', pdfa: 'A' }), []))).toMatchObject({
      field: 'pdfa',
    })
  })

  it('maps page ranges, header and footer, tags and outline, the media type and the waits', () => {
    const plan = planOf(
      'chromium-html',
      fields({
        nativePageRanges: '1-2, 4',
        generateTaggedPdf: 'true',
        generateDocumentOutline: 'true',
        emulatedMediaType: 'screen',
        waitForSelector: '#ready',
        waitForExpression: 'window.done === true',
        waitDelay: '1.5s',
      }),
      [file('index.html')],
      { footer: '<span class="pageNumber"></span>' },
    )
    expect(plan.runs[0].input).toMatchObject({
      pdfOptions: {
        pageRanges: '1-2, 4',
        tagged: true,
        outline: true,
        footerTemplate: '<span class="pageNumber"></span>',
      },
      media: 'screen',
      wait: { selector: '#ready', expression: 'window.done === true', delayMs: 1500 },
    })
    expect(
      refusal(() => planOf('chromium-url', fields({ url: 'https://x.test/', waitDelay: 'soon' }), [])),
    ).toMatchObject({
      field: 'waitDelay',
    })
    expect(
      refusal(() => planOf('chromium-url', fields({ url: 'https://x.test/', emulatedMediaType: 'tv' }), [])),
    ).toMatchObject({ field: 'emulatedMediaType' })
    expect(
      refusal(() => planOf('chromium-url', fields({ url: 'https://x.test/', nativePageRanges: 'all' }), [])),
    ).toMatchObject({ field: 'nativePageRanges' })
  })

  it('takes a field dutil does not offer only at its default, and refuses it otherwise, naming it', () => {
    const at = fields({
      url: 'https://example.test/',
      userAgent: '',
      skipNetworkIdleEvent: 'true',
      omitBackground: 'false',
    })
    expect(planOf('chromium-url', at, []).runs).toHaveLength(1)
    const r = refusal(() => planOf('chromium-url', fields({ url: 'https://x.test/', userAgent: 'bot/1' }), []))
    expect(r).toMatchObject({ field: 'userAgent' })
    expect(r.message).toMatch(/'userAgent' is not supported by dutil/)
    expect(
      refusal(() => planOf('chromium-url', fields({ url: 'https://x.test/', failOnConsoleExceptions: 'true' }), [])),
    ).toMatchObject({
      field: 'failOnConsoleExceptions',
    })
    expect(refusal(() => planOf('chromium-url', fields({ url: 'https://x.test/', colour: 'red' }), []))).toMatchObject({
      field: 'colour',
      message: "form field 'colour' is not one this route takes",
    })
    expect(refusal(() => planOf('chromium-html', fields(), [file('page.html')]))).toMatchObject({ field: 'index.html' })
    expect(refusal(() => planOf('chromium-url', fields({ url: 'https://x.test/', scale: '3' }), []))).toMatchObject({
      field: 'scale',
    })
  })

  it('converts each office document, in natural name order, merged into one when asked', () => {
    const docs = [file('10-annex.xlsx'), file('2-report.docx')]
    const plan = planOf('libreoffice', fields({ landscape: '1', nativePageRanges: '1-2', pdfa: 'PDF/A-2b' }), docs)
    expect(plan.merge).toBe(false)
    expect(plan.runs.map((r) => [r.utility, r.stem, r.input])).toEqual([
      ['office-pdf', '2-report', { url: docs[1].url, landscape: true, pageRanges: '1-2', pdfa: 'PDF/A-2b' }],
      ['office-pdf', '10-annex', { url: docs[0].url, landscape: true, pageRanges: '1-2', pdfa: 'PDF/A-2b' }],
    ])
    expect(planOf('libreoffice', fields({ merge: 'true' }), docs).merge).toBe(true)
    expect(planOf('libreoffice', fields({ merge: 'true' }), [docs[0]]).merge).toBe(false)
    expect(refusal(() => planOf('libreoffice', fields(), [file('drawing.vsd')]))).toMatchObject({
      field: 'drawing.vsd',
    })
    expect(planOf('libreoffice', fields(), [file('notes.fodt'), file('table.csv')]).runs).toHaveLength(2)
    // The password opens every protected document of the request; elsewhere it is no field of the route's.
    expect(planOf('libreoffice', fields({ password: 'open sesame' }), docs).runs.map((r) => r.input)).toEqual([
      { url: docs[1].url, password: 'open sesame' },
      { url: docs[0].url, password: 'open sesame' },
    ])
    expect(planOf('libreoffice', fields({ password: '' }), docs).runs[0].input).toEqual({ url: docs[1].url })
    expect(refusal(() => planOf('chromium-html', fields({ password: 'secret' }), [file('index.html')]))).toMatchObject({
      field: 'password',
    })
    expect(refusal(() => planOf('libreoffice', fields({ pdfa: 'PDF/A-4' }), docs))).toMatchObject({ field: 'pdfa' })
  })

  it("maps LibreOffice's export options: pictures (quality, resolution when reduced, lossless), bookmarks, notes, form fields, one page per sheet", () => {
    const docs = [file('report.docx')]
    const inputOf = (given: Record<string, string>) => planOf('libreoffice', fields(given), docs).runs[0].input
    expect(
      inputOf({
        quality: '50',
        reduceImageResolution: 'true',
        maxImageResolution: '150',
        losslessImageCompression: 'false',
        exportBookmarks: 'false',
        exportNotes: 'true',
        exportFormFields: 'false',
        singlePageSheets: 'true',
      }),
    ).toEqual({
      url: docs[0].url,
      imageQuality: 50,
      maxImageResolution: 150,
      losslessImages: false,
      exportBookmarks: false,
      exportNotes: true,
      exportFormFields: false,
      singlePageSheets: true,
    })
    // Gotenberg applies the resolution only when asked to reduce, at 300 unless given.
    expect(inputOf({ maxImageResolution: '75' })).toEqual({ url: docs[0].url })
    expect(inputOf({ reduceImageResolution: 'true' })).toEqual({ url: docs[0].url, maxImageResolution: 300 })
    expect(refusal(() => inputOf({ quality: '0' }))).toMatchObject({ field: 'quality' })
    expect(refusal(() => inputOf({ reduceImageResolution: 'true', maxImageResolution: '100' }))).toMatchObject({
      field: 'maxImageResolution',
    })
  })

  it("writes a merge's metadata as merge-pdf's info: the keys dutil writes, others refused naming them", () => {
    const pdfs = [file('a.pdf'), file('b.pdf')]
    const infoOf = (metadata: string) => planOf('merge', fields({ metadata }), pdfs).runs[0].input.info
    expect(infoOf('{"Title":"Q4","Author":"Ana","Keywords":["a","b"],"Producer":"x"}')).toEqual({
      title: 'Q4',
      author: 'Ana',
      keywords: ['a', 'b'],
      producer: 'x',
    })
    expect(infoOf('{"Keywords":"one"}')).toEqual({ keywords: ['one'] })
    expect(infoOf('{}')).toBeUndefined()
    for (const bad of ['{"CreationDate":"2026-01-01"}', '[1]', 'not json', '{"Title":3}'])
      expect(
        refusal(() => infoOf(bad)),
        bad,
      ).toMatchObject({ field: 'metadata' })
  })

  it('merges PDFs in natural name order, and splits by intervals or by pages, one file each or unified', () => {
    const merge = planOf('merge', fields(), [file('b.pdf'), file('a.pdf')])
    expect(merge.runs[0].input).toEqual({ files: [{ url: file('a.pdf').url }, { url: file('b.pdf').url }] })
    expect(refusal(() => planOf('merge', fields(), [file('a.pdf')]))).toMatchObject({ field: 'files' })
    expect(refusal(() => planOf('merge', fields(), [file('a.pdf'), file('b.docx')]))).toMatchObject({ field: 'b.docx' })
    const split = (o: Record<string, string>) => planOf('split', fields(o), [file('report.pdf')])
    expect(split({ splitMode: 'intervals', splitSpan: ' 1 ' })).toMatchObject({
      split: true,
      runs: [{ utility: 'split-pdf', stem: 'report', input: { url: file('report.pdf').url } }],
    })
    expect(split({ splitMode: 'intervals', splitSpan: '2' }).runs[0].input).toMatchObject({ every: 2 })
    expect(split({ splitMode: 'pages', splitSpan: '1-2,4' })).toMatchObject({
      split: true,
      runs: [{ input: { pages: '1-2,4' } }],
    })
    expect(split({ splitMode: 'pages', splitSpan: '3-', splitUnify: 'true' })).toMatchObject({
      split: false,
      runs: [{ input: { pages: '3-', unify: true } }],
    })
    expect(refusal(() => split({ splitMode: 'pages', splitSpan: 'odd' }))).toMatchObject({ field: 'splitSpan' })
    expect(refusal(() => split({ splitMode: 'intervals', splitSpan: '0' }))).toMatchObject({ field: 'splitSpan' })
    expect(refusal(() => split({ splitMode: 'intervals', splitSpan: '2', splitUnify: 'true' }))).toMatchObject({
      field: 'splitUnify',
    })
    expect(refusal(() => split({ splitMode: 'halves', splitSpan: '1' }))).toMatchObject({ field: 'splitMode' })
    expect(refusal(() => split({ splitSpan: '1' }))).toMatchObject({ field: 'splitMode' })
  })

  it('encrypts each PDF with edit-pdf, allowing the most its flags allow and never a change one refused', () => {
    expect(planOf('encrypt', fields({ userPassword: 'foo' }), [file('a.pdf')]).runs).toEqual([
      {
        utility: 'edit-pdf',
        input: { url: file('a.pdf').url, encrypt: { userPassword: 'foo', print: 'full', modify: 'all', copy: true } },
        stem: 'a',
      },
    ])
    const encryption = (given: Record<string, string>) =>
      planOf('encrypt', fields({ userPassword: 'foo', ...given }), [file('a.pdf')]).runs[0].input.encrypt
    expect(encryption({ ownerPassword: 'bar', allowPrinting: 'false', allowCopying: 'false' })).toEqual({
      userPassword: 'foo',
      ownerPassword: 'bar',
      print: 'none',
      modify: 'all',
      copy: false,
    })
    expect(encryption({ allowModifying: 'false' })).toMatchObject({ modify: 'annotate' })
    // Form filling refused: annotating (which includes it) is refused too.
    expect(encryption({ allowModifying: 'false', allowFillingForms: 'false' })).toMatchObject({ modify: 'assembly' })
    expect(encryption({ allowAssembling: 'false' })).toMatchObject({ modify: 'none' })
    expect(refusal(() => planOf('encrypt', fields({ ownerPassword: 'bar' }), [file('a.pdf')]))).toMatchObject({
      field: 'userPassword',
    })
    expect(
      refusal(() => planOf('encrypt', fields({ userPassword: 'foo', allowPrinting: 'maybe' }), [file('a.pdf')])),
    ).toMatchObject({ field: 'allowPrinting' })
    // Elsewhere a password is no field of the route's.
    expect(refusal(() => planOf('flatten', fields({ userPassword: 'foo' }), [file('a.pdf')]))).toMatchObject({
      field: 'userPassword',
    })
  })

  it('embeds the embeds files in every PDF, each with the media type embedsMetadata gives it', () => {
    const [a, b] = [file('b.pdf'), file('a.pdf')]
    const xml = file('factur-x.xml', 'embeds')
    const png = file('logo.png', 'embeds')
    const plan = planOf(
      'embed',
      fields({ embedsMetadata: JSON.stringify({ 'factur-x.xml': { mimeType: 'text/xml' } }) }),
      [a, xml, b, png],
    )
    expect(plan.runs.map((r) => [r.stem, r.input])).toEqual(
      ['a', 'b'].map((stem) => [
        stem,
        {
          url: (stem === 'a' ? b : a).url,
          attachments: [
            { url: xml.url, name: 'factur-x.xml', mimeType: 'text/xml' },
            { url: png.url, name: 'logo.png' },
          ],
        },
      ]),
    )
    expect(refusal(() => planOf('embed', fields(), [a]))).toMatchObject({ field: 'embeds' })
    const relationship = JSON.stringify({ 'factur-x.xml': { relationship: 'Alternative' } })
    expect(refusal(() => planOf('embed', fields({ embedsMetadata: relationship }), [a, xml]))).toMatchObject({
      field: 'embedsMetadata',
      message: expect.stringContaining("'relationship'"),
    })
    const stranger = JSON.stringify({ 'other.xml': { mimeType: 'text/xml' } })
    expect(refusal(() => planOf('embed', fields({ embedsMetadata: stranger }), [a, xml]))).toMatchObject({
      field: 'embedsMetadata',
    })
    // Elsewhere embeds stay refused.
    expect(refusal(() => planOf('flatten', fields(), [a, xml]))).toMatchObject({ field: 'embeds' })
  })

  it('writes the same bookmarks to every PDF, or each its own by file name', () => {
    const outline = [{ title: 'One', page: 1 }]
    const [a, b] = [file('a.pdf'), file('b.pdf')]
    expect(planOf('bookmarks-write', fields({ bookmarks: JSON.stringify(outline) }), [b, a]).runs).toEqual([
      { utility: 'edit-pdf', input: { url: a.url, bookmarks: outline }, stem: 'a' },
      { utility: 'edit-pdf', input: { url: b.url, bookmarks: outline }, stem: 'b' },
    ])
    const own = { 'a.pdf': outline, 'b.pdf': [] }
    expect(
      planOf('bookmarks-write', fields({ bookmarks: JSON.stringify(own) }), [a, b]).runs.map((r) => r.input),
    ).toEqual([
      { url: a.url, bookmarks: outline },
      { url: b.url, bookmarks: [] },
    ])
    expect(
      refusal(() => planOf('bookmarks-write', fields({ bookmarks: JSON.stringify({ 'a.pdf': outline }) }), [a, b])),
    ).toMatchObject({ field: 'bookmarks', message: "form field 'bookmarks' names no bookmarks for 'b.pdf'" })
    expect(refusal(() => planOf('bookmarks-write', fields({ bookmarks: '{' }), [a]))).toMatchObject({
      field: 'bookmarks',
    })
    expect(refusal(() => planOf('bookmarks-write', fields(), [a]))).toMatchObject({ field: 'bookmarks' })
  })

  it('converts each PDF to PDF/A or PDF/UA as an edit-pdf job, one of the two', () => {
    const pdf = file('a.pdf')
    expect(planOf('convert', fields({ pdfa: 'PDF/A-2b', pdfua: 'false' }), [pdf])).toEqual({
      runs: [{ utility: 'edit-pdf', input: { url: pdf.url, pdfa: 'PDF/A-2b' }, stem: 'a' }],
      merge: false,
      split: false,
    })
    expect(planOf('convert', fields({ pdfua: 'true' }), [pdf]).runs[0].input).toEqual({ url: pdf.url, pdfua: true })
    expect(refusal(() => planOf('convert', fields({ pdfa: 'PDF/A-2b', pdfua: 'true' }), [pdf]))).toMatchObject({
      field: 'pdfua',
      message: expect.stringMatching(/drops the tags/),
    })
    expect(refusal(() => planOf('convert', fields(), [pdf]))).toMatchObject({
      field: 'pdfa',
      message: "either form field 'pdfa' or 'pdfua' is required",
    })
    expect(refusal(() => planOf('convert', fields({ pdfa: 'PDF/A-4' }), [pdf]))).toMatchObject({ field: 'pdfa' })
  })

  it('flattens, turns and writes the metadata of each PDF as an edit-pdf job named after it', () => {
    const pdfs = [file('b.pdf'), file('a.pdf')]
    expect(planOf('flatten', fields(), pdfs)).toEqual({
      runs: [
        { utility: 'edit-pdf', input: { url: pdfs[1].url, flatten: true }, stem: 'a' },
        { utility: 'edit-pdf', input: { url: pdfs[0].url, flatten: true }, stem: 'b' },
      ],
      merge: false,
      split: false,
    })
    expect(planOf('rotate', fields({ rotateAngle: '90' }), [file('a.pdf')]).runs[0].input).toEqual({
      url: pdfs[1].url,
      rotate: { angle: 90 },
    })
    expect(
      planOf('rotate', fields({ rotateAngle: '270', rotatePages: '1-2, 4' }), [file('a.pdf')]).runs[0].input,
    ).toMatchObject({ rotate: { angle: 270, pages: '1-2,4' } })
    expect(refusal(() => planOf('rotate', fields({ rotateAngle: '45' }), [file('a.pdf')]))).toMatchObject({
      field: 'rotateAngle',
    })
    expect(refusal(() => planOf('rotate', fields(), [file('a.pdf')]))).toMatchObject({ field: 'rotateAngle' })
    expect(
      refusal(() => planOf('rotate', fields({ rotateAngle: '90', rotatePages: 'odd' }), [file('a.pdf')])),
    ).toMatchObject({ field: 'rotatePages' })
    expect(
      planOf('metadata-write', fields({ metadata: '{"Title":"T","Keywords":["a","b"]}' }), [file('a.pdf')]).runs[0]
        .input,
    ).toEqual({ url: pdfs[1].url, info: { title: 'T', keywords: ['a', 'b'] } })
    expect(refusal(() => planOf('metadata-write', fields(), [file('a.pdf')]))).toMatchObject({ field: 'metadata' })
    expect(refusal(() => planOf('metadata-write', fields({ metadata: '{}' }), [file('a.pdf')]))).toMatchObject({
      field: 'metadata',
    })
    // A text watermark behind the pages, a stamp over them; pictures, PDFs and engine options refused.
    expect(
      planOf('watermark', fields({ watermarkSource: 'text', watermarkExpression: 'DRAFT', watermarkPages: '2-' }), [
        file('a.pdf'),
      ]).runs[0].input,
    ).toEqual({ url: pdfs[1].url, stamp: { text: 'DRAFT', layer: 'under', angle: 45, pages: '2-' } })
    expect(
      planOf('stamp', fields({ stampSource: 'text', stampExpression: 'PAID', stampOptions: '{ }' }), [file('a.pdf')])
        .runs[0].input,
    ).toEqual({ url: pdfs[1].url, stamp: { text: 'PAID', layer: 'over', angle: 45 } })
    // A picture or a PDF: the route's own file (`stamp`, `watermark`) is the mark, the others are the PDFs stamped.
    const logo = file('logo.png', 'stamp')
    expect(planOf('stamp', fields({ stampSource: 'image' }), [file('a.pdf'), logo]).runs.map((r) => r.input)).toEqual([
      { url: pdfs[1].url, stamp: { image: logo.url, layer: 'over' } },
    ])
    const seal = file('seal.pdf', 'watermark')
    expect(
      planOf('watermark', fields({ watermarkSource: 'pdf', watermarkPages: '1' }), [file('a.pdf'), seal]).runs.map(
        (r) => r.input,
      ),
    ).toEqual([{ url: pdfs[1].url, stamp: { image: seal.url, layer: 'under', pages: '1' } }])
    expect(
      refusal(() => planOf('stamp', fields({ stampSource: 'image', stampExpression: 'x' }), [file('a.pdf')])),
    ).toMatchObject({ field: 'stamp' })
    expect(refusal(() => planOf('stamp', fields({ stampSource: 'svg' }), [file('a.pdf')]))).toMatchObject({
      field: 'stampSource',
    })
    expect(
      refusal(() => planOf('watermark', fields({ watermarkSource: 'image' }), [file('a.pdf'), logo])),
    ).toMatchObject({ field: 'stamp' })
    expect(
      refusal(() =>
        planOf(
          'watermark',
          fields({ watermarkSource: 'text', watermarkExpression: 'x', watermarkOptions: '{"opacity":1}' }),
          [file('a.pdf')],
        ),
      ),
    ).toMatchObject({ field: 'watermarkOptions' })
    expect(refusal(() => planOf('watermark', fields({ watermarkSource: 'text' }), [file('a.pdf')]))).toMatchObject({
      field: 'watermarkExpression',
    })
    expect(
      refusal(() =>
        planOf('watermark', fields({ watermarkSource: 'text', watermarkExpression: 'x' }), [
          file('a.pdf'),
          file('w.png', 'watermark'),
        ]),
      ),
    ).toMatchObject({ field: 'watermark' })
    // Fields of other routes, and files that are not PDFs, are refused naming them.
    expect(refusal(() => planOf('flatten', fields({ rotateAngle: '90' }), [file('a.pdf')]))).toMatchObject({
      field: 'rotateAngle',
    })
    expect(refusal(() => planOf('flatten', fields(), [file('a.docx')]))).toMatchObject({ field: 'a.docx' })
  })

  it("reads each PDF's metadata or bookmarks with a pdf-info job, answered keyed by the file's name", () => {
    const pdfs = [file('b.pdf'), file('a.pdf')]
    expect(planOf('metadata-read', fields(), pdfs)).toEqual({
      runs: [
        { utility: 'pdf-info', input: { url: pdfs[1].url }, stem: 'a', name: 'a.pdf' },
        { utility: 'pdf-info', input: { url: pdfs[0].url }, stem: 'b', name: 'b.pdf' },
      ],
      merge: false,
      split: false,
      facts: 'metadata',
    })
    expect(planOf('bookmarks-read', fields(), [file('a.pdf')])).toMatchObject({
      runs: [{ utility: 'pdf-info', input: { url: pdfs[1].url, bookmarks: true }, name: 'a.pdf' }],
      facts: 'bookmarks',
    })
    expect(refusal(() => planOf('metadata-read', fields({ metadata: '{}' }), pdfs))).toMatchObject({
      field: 'metadata',
    })
    expect(refusal(() => planOf('metadata-read', fields(), [file('a.docx')]))).toMatchObject({ field: 'a.docx' })
    expect(refusal(() => planOf('metadata-read', fields(), []))).toMatchObject({ field: 'files' })
  })

  it("refuses the PDF engines' extra files (watermark, stamp, embeds)", () => {
    expect(
      refusal(() => planOf('merge', fields(), [file('a.pdf'), file('b.pdf'), file('w.pdf', 'watermark')])),
    ).toMatchObject({
      field: 'watermark',
    })
  })
})
