import { describe, expect, it } from 'vitest'
import { sniffContentType } from './upload-sniff.js'

describe('sniffContentType', () => {
  it.each([
    ['%PDF-1.7\n', 'application/pdf'],
    ['PK\u0003\u0004rest', 'application/zip'],
    ['{\\rtf1\\ansi', 'application/rtf'],
    ['\uFEFF  <!DOCTYPE html><p>x', 'text/html'],
    ['<html><body>', 'text/html'],
    ['GIF89a', 'image/gif'],
    ['plain words', 'application/octet-stream'],
    ['', 'application/octet-stream'],
  ])('tells %j as %s', (head, type) => {
    expect(sniffContentType(Buffer.from(head, 'utf8'))).toBe(type)
  })

  it('tells a Compound File (legacy Word, Excel, PowerPoint), PNG and JPEG by their magic bytes', () => {
    expect(sniffContentType(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0]))).toBe(
      'application/x-ole-storage',
    )
    expect(sniffContentType(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe('image/png')
    expect(sniffContentType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg')
  })
})
