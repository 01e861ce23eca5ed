import { describe, expect, it } from 'vitest'
import { csvColumns, importFilterOf, MAX_CSV_COLUMNS } from './handler.js'

describe('how LibreOffice reads plain text', () => {
  it('counts the widest line of a CSV file, separators inside quotes not counted', () => {
    expect(csvColumns(Buffer.from('a,b\nc,"d,e\nf",g,h\n'))).toBe(4)
    expect(csvColumns(Buffer.from('one'))).toBe(1)
    expect(csvColumns(Buffer.from('a,b\r\nc,d,e'))).toBe(3)
  })

  it('imports every CSV column as text (no formula is evaluated), UTF-8, comma, double quotes', () => {
    expect(importFilterOf('csv', Buffer.from('=WEBSERVICE("http://x"),2\n3\n'))).toEqual({
      importFilter: 'Text - txt - csv (StarCalc)',
      importOptions: '44,34,76,1,1/2/2/2',
    })
    expect(importFilterOf('txt', Buffer.from('prose'))).toEqual({
      importFilter: 'Text (encoded)',
      importOptions: 'UTF8',
    })
    expect(importFilterOf('docx', Buffer.from('x'))).toEqual({})
  })

  it('refuses a CSV file wider than a sheet as upstream_rejected', () => {
    const wide = Buffer.from(`${'x,'.repeat(MAX_CSV_COLUMNS)}x\n`)
    expect(() => importFilterOf('csv', wide)).toThrow(
      expect.objectContaining({ code: 'upstream_rejected', message: expect.stringContaining('1024 columns') }),
    )
  })
})
