import { describe, expect, it } from 'vitest'
import { downloadHeaders } from './file-links.js'

describe('download link headers', () => {
  it('always downloads as an attachment under the file name (RFC 6266, with a UTF-8 form)', () => {
    expect(downloadHeaders({ name: 'page-001.pdf', contentType: 'application/pdf' })).toEqual({
      'response-content-disposition': `attachment; filename="page-001.pdf"; filename*=UTF-8''page-001.pdf`,
    })
    expect(
      downloadHeaders({ name: 'Überblick "Q1" (draft)*.pdf', contentType: 'application/pdf' })[
        'response-content-disposition'
      ],
    ).toBe(
      `attachment; filename="_berblick _Q1_ (draft)*.pdf"; filename*=UTF-8''%C3%9Cberblick%20%22Q1%22%20%28draft%29%2A.pdf`,
    )
  })

  it('serves types a browser would run or render as a page as application/octet-stream', () => {
    const xmlKinds = [
      'application/mathml+xml',
      'application/rss+xml',
      'application/atom+xml',
      'application/xslt+xml',
      'application/vnd.example.doc+xml; charset=utf-8',
    ]
    for (const t of [
      'text/html',
      'text/html; charset=utf-8',
      'image/svg+xml',
      'application/xhtml+xml',
      'text/xml',
      'application/javascript',
      'multipart/related',
      ...xmlKinds,
    ]) {
      expect(downloadHeaders({ name: 'x', contentType: t })['response-content-type'], t).toBe(
        'application/octet-stream',
      )
    }
    expect(downloadHeaders({ name: 'x', contentType: null })['response-content-type']).toBe('application/octet-stream')
    for (const t of ['application/pdf', 'image/png', 'application/zip', 'text/plain'])
      expect(downloadHeaders({ name: 'x', contentType: t })['response-content-type'], t).toBeUndefined()
  })
})
