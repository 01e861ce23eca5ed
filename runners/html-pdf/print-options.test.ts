import { describe, expect, it } from 'vitest'
import { pdfFileName, printOptions } from './print-options.js'
import { forwardHeaders, localResourceFromConsole, responseHeaders, routeRequest } from './request-policy.js'

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
