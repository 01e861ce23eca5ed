import { describe, expect, it } from 'vitest'
import { gotenbergMetadataOf } from './metadata.js'

describe('gotenbergMetadataOf', () => {
  it("names pdf-info's facts as ExifTool does, its dates in ExifTool's form", () => {
    expect(
      gotenbergMetadataOf('report.pdf', {
        files: [],
        pageCount: 3,
        pdfVersion: '1.7',
        encrypted: false,
        passwordRequired: false,
        linearized: true,
        title: 'Q3',
        keywords: 'a, b',
        created: '2026-07-01T09:30:00+02:00',
        modified: '2026-07-02T10:00:00Z',
      }),
    ).toEqual({
      FileName: 'report.pdf',
      FileType: 'PDF',
      FileTypeExtension: 'pdf',
      MIMEType: 'application/pdf',
      PDFVersion: 1.7,
      Linearized: 'Yes',
      PageCount: 3,
      Title: 'Q3',
      Keywords: ['a', 'b'],
      CreateDate: '2026:07:01 09:30:00+02:00',
      ModDate: '2026:07:02 10:00:00Z',
      ModifyDate: '2026:07:02 10:00:00Z',
    })
  })

  it('gives one keyword as a text', () => {
    expect(gotenbergMetadataOf('a.pdf', { keywords: 'invoice' }).Keywords).toBe('invoice')
  })

  it('gives only what could be read of a PDF that needs a password', () => {
    expect(gotenbergMetadataOf('locked.pdf', { encrypted: true, passwordRequired: true, linearized: false })).toEqual({
      FileName: 'locked.pdf',
      FileType: 'PDF',
      FileTypeExtension: 'pdf',
      MIMEType: 'application/pdf',
      Linearized: 'No',
    })
  })
})
