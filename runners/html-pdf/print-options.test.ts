import { describe, expect, it } from 'vitest'
import { cssPx, pdfFileName, printOptions, singlePageLayout } from './print-options.js'
import { checkPdfOptions } from './utility.js'
import { forwardHeaders, localResourceFromConsole, responseHeaders, routeRequest } from './request-policy.js'

describe('singlePageLayout', () => {
  it("lays the page out at its paper's printable width, then prints one page as tall as the content plus its margins", () => {
    const letter = singlePageLayout()
    expect(letter.layoutWidthPx).toBe(816)
    expect(letter.optionsFor(5000)).toEqual({ width: '816px', height: '5001px' })
    const a4 = singlePageLayout({
      format: 'A4',
      scale: 0.5,
      margin: { top: '10mm', bottom: '0.5in', left: '10mm', right: '10mm' },
      pageRanges: '1',
      printBackground: true,
      omitBackground: true,
    })
    expect(a4.layoutWidthPx).toBe(Math.floor((8.27 * 96 - 2 * cssPx('10mm')) / 0.5))
    expect(a4.optionsFor(2000)).toEqual({
      width: `${Math.round(8.27 * 96)}px`,
      height: `${Math.ceil(1000 + cssPx('10mm') + 48) + 1}px`,
      margin: { top: '10mm', bottom: '0.5in', left: '10mm', right: '10mm' },
      scale: 0.5,
      printBackground: true,
      omitBackground: true,
    })
  })

  it("takes a landscape paper's height as its width, and a width given as is", () => {
    expect(singlePageLayout({ landscape: true }).layoutWidthPx).toBe(1056)
    expect(singlePageLayout({ width: '300px', height: '2in' }).optionsFor(10).width).toBe('300px')
    expect(cssPx('2.54cm')).toBeCloseTo(96)
    expect(() => singlePageLayout().optionsFor(200 * 96)).toThrow(
      expect.objectContaining({ code: 'upstream_rejected', message: expect.stringContaining('at most 200 in') }),
    )
  })

  it('is not taken with page ranges or the CSS page size', () => {
    expect(checkPdfOptions({ pdfOptions: { singlePage: true, pageRanges: '1', preferCSSPageSize: true } })).toEqual([
      { path: 'pdfOptions.pageRanges', message: 'is not taken with singlePage' },
      { path: 'pdfOptions.preferCSSPageSize', message: 'is not taken with singlePage' },
    ])
    expect(checkPdfOptions({ pdfOptions: { singlePage: false, pageRanges: '1' } })).toEqual([])
  })
})

describe('printOptions', () => {
  it('keeps Chromium defaults when nothing is given', () => {
    expect(printOptions()).toEqual({})
  })

  it('prints page ranges, a header and footer (the other one empty), tagged, and an outline that asks for tags', () => {
    expect(printOptions({ pageRanges: '2-3', footerTemplate: '<span class="pageNumber"></span>' })).toEqual({
      pageRanges: '2-3',
      displayHeaderFooter: true,
      headerTemplate: '<span></span>',
      footerTemplate: '<span class="pageNumber"></span>',
    })
    expect(printOptions({ tagged: true })).toEqual({ tagged: true })
    expect(printOptions({ outline: true })).toEqual({ outline: true, tagged: true })
  })

  it('maps every pdfOptions key', () => {
    expect(
      printOptions({
        format: 'A4',
        orientation: 'landscape',
        scale: 0.8,
        preferCSSPageSize: true,
        printBackground: true,
        margin: { top: '10mm', bottom: '1in' },
      }),
    ).toEqual({
      format: 'A4',
      landscape: true,
      scale: 0.8,
      preferCSSPageSize: true,
      printBackground: true,
      margin: { top: '10mm', bottom: '1in' },
    })
    expect(printOptions({ width: '100mm', height: '200mm', landscape: false })).toEqual({
      width: '100mm',
      height: '200mm',
      landscape: false,
    })
    expect(printOptions({ orientation: 'portrait' })).toEqual({ landscape: false })
  })
})

describe('pdfFileName', () => {
  it('names the PDF after the input', () => {
    expect(pdfFileName('invoice.html')).toBe('invoice.pdf')
    expect(pdfFileName('')).toBe('document.pdf')
    expect(pdfFileName('../../a b?.htm')).toBe('_.._a b_.pdf')
    expect(pdfFileName('.html')).toBe('document.pdf')
  })
})

describe('request policy', () => {
  it.each([
    ['https://example.com/a.css', 'fetch'],
    ['HTTP://example.com/', 'fetch'],
    ['data:image/png;base64,AAAA', 'internal'],
    ['blob:https://example.com/uuid', 'internal'],
    ['about:blank', 'internal'],
    ['file:///etc/passwd', 'refuse'],
    ['FILE:///etc/passwd', 'refuse'],
    ['ftp://example.com/x', 'refuse'],
    ['chrome://settings', 'refuse'],
    ['ws://example.com/socket', 'refuse'],
    ['filesystem:https://example.com/temporary/x', 'refuse'],
  ])('%s → %s', (url, route) => {
    expect(routeRequest(url)).toBe(route)
  })

  it('drops framing headers of the upstream answer and forwards only harmless request headers', () => {
    expect(
      responseHeaders({
        'content-type': 'text/css',
        'content-encoding': 'gzip',
        'content-length': '9',
        'set-cookie': ['a=1', 'b=2'],
      }),
    ).toEqual({
      'content-type': 'text/css',
      'set-cookie': 'a=1\nb=2',
    })
    expect(forwardHeaders({ accept: 'text/css', cookie: 'x', authorization: 'y', referer: 'https://a/' })).toEqual({
      'accept-encoding': 'identity',
      accept: 'text/css',
      referer: 'https://a/',
    })
  })

  it("reads Chromium's local-resource console error", () => {
    expect(localResourceFromConsole('Not allowed to load local resource: file:///etc/passwd')).toBe(
      'file:///etc/passwd',
    )
    expect(localResourceFromConsole('hello')).toBeNull()
  })
})
