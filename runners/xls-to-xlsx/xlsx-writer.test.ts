import XLSX from 'xlsx'
import { describe, expect, it } from 'vitest'
import { checkSheetNames, columnName, escapeXml, excelSerial, writeXlsx, XlsxWriteError } from './xlsx-writer.js'

describe('xlsx writer', () => {
  it('writes every value type, merges and the used range so that a reader gets them back', async () => {
    const when = new Date(2024, 2, 1, 12, 30)
    const xlsx = await writeXlsx([
      {
        name: 'Data & more',
        merges: [[0, 0, 0, 1]],
        rows: [
          [{ t: 's', v: 'title' }, null, { t: 's', v: '  padded  ' }],
          null,
          [
            { t: 'n', v: 1.5 },
            { t: 'b', v: true },
            { t: 'd', v: when },
            { t: 'e', v: 0x07 },
            { t: 'n', v: Number.NaN },
            { t: 's', v: 'a\u0001b <&>' },
          ],
        ],
      },
      { name: 'Empty', merges: [], rows: [] },
    ])
    const wb = XLSX.read(xlsx, { cellDates: true })
    expect(wb.SheetNames).toEqual(['Data & more', 'Empty'])
    const ws = wb.Sheets['Data & more']
    expect(ws['!ref']).toBe('A1:F3')
    expect(ws['!merges']).toEqual([{ s: { r: 0, c: 0 }, e: { r: 0, c: 1 } }])
    expect(ws.A1).toMatchObject({ t: 's', v: 'title' })
    expect(ws.C1.v).toBe('  padded  ')
    expect(ws.A3).toMatchObject({ t: 'n', v: 1.5 })
    expect(ws.B3).toMatchObject({ t: 'b', v: true })
    expect((ws.C3.v as Date).getTime()).toBe(when.getTime())
    expect(ws.D3).toMatchObject({ t: 'e', w: '#DIV/0!' })
    expect(ws.E3).toMatchObject({ t: 'e', w: '#NUM!' })
    expect(ws.F3.v).toBe('a\u0001b <&>')
    expect(wb.Sheets.Empty['!ref']).toBeUndefined()
  })

  it('refuses what the format cannot hold', async () => {
    await expect(writeXlsx([])).rejects.toThrow(XlsxWriteError)
    await expect(writeXlsx([{ name: 'a', merges: [], rows: [[{ t: 's', v: 'x'.repeat(32_768) }]] }])).rejects.toThrow(
      /more than 32767 characters/,
    )
    expect(() => checkSheetNames(['a', 'A'])).toThrow(/two sheets/)
    expect(() => checkSheetNames(['a/b'])).toThrow(/contains one of/)
    expect(() => checkSheetNames([''])).toThrow(/1 to 31/)
  })

  it('spells columns, escapes text and counts dates like Excel', () => {
    expect([0, 25, 26, 701, 702, 16_383].map(columnName)).toEqual(['A', 'Z', 'AA', 'ZZ', 'AAA', 'XFD'])
    expect(escapeXml(`<a href="x">'&'</a>\u0000\t`)).toBe(
      '&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;_x0000_\t',
    )
    expect(excelSerial(new Date(1900, 0, 1))).toBe(2)
    expect(excelSerial(new Date(2024, 2, 1, 12))).toBe(45352.5)
  })
})
