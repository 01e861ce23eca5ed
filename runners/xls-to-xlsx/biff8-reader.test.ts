import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import XLSX from 'xlsx'
import { describe, expect, it } from 'vitest'
import { EncryptedWorkbookError, isDateFormat, NotCoveredError, readBiff8 } from './biff8-reader.js'
import { excelSerial, type SheetData } from './xlsx-writer.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
// Made by LibreOffice and xlwt (test/fixtures/workbooks/generate.ts): not by SheetJS, the oracle.
const workbook = (name: string) => readFileSync(join(REPO, 'test/fixtures/workbooks', name))

/** SheetJS's reading, with the options the worker's fallback uses. */
function sheetJs(bytes: Buffer): SheetData[] {
  const wb = XLSX.read(bytes, {
    type: 'buffer',
    dense: true,
    cellFormula: false,
    cellHTML: false,
    cellNF: false,
    cellStyles: false,
    cellText: false,
    cellDates: true,
    sheetStubs: false,
  })
  return wb.SheetNames.map((name) => {
    const ws = wb.Sheets[name] as unknown as SheetData['rows'] & { '!merges'?: XLSX.Range[] }
    return { name, merges: (ws['!merges'] ?? []).map((m) => [m.s.r, m.s.c, m.e.r, m.e.c]), rows: ws }
  })
}

type Cells = Record<string, [string, unknown]>
/** Every cell by reference, dates as serial days (SheetJS gives Dates, our reader serials). */
function cells(sheet: SheetData): Cells {
  const out: Cells = {}
  sheet.rows.forEach((row, r) =>
    row?.forEach((cell, c) => {
      if (!cell) return
      out[`${XLSX.utils.encode_col(c)}${r + 1}`] = [
        cell.t,
        cell.t === 'd' && cell.v instanceof Date ? Math.round(excelSerial(cell.v) * 86_400) / 86_400 : cell.v,
      ]
    }),
  )
  return out
}

function benchLike(): Buffer {
  const wb = XLSX.utils.book_new()
  for (let s = 1; s <= 2; s++) {
    const aoa: unknown[][] = [['id', 'name', 'amount', 'rate', 'city', 'note']]
    for (let r = 1; r <= 500; r++)
      aoa.push([r, `name ${r}`, r * 1.25, (r % 97) / 100, ['Oslo', 'Lyon'][r % 2], r % 5 ? '' : `note ${r}`])
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(aoa), `Sheet${s}`)
  }
  return XLSX.write(wb, { type: 'buffer', bookType: 'biff8' }) as Buffer
}

describe('our BIFF8 reader', () => {
  it('reads what SheetJS reads from workbooks of three producers', () => {
    for (const [name, bytes] of [
      ['SheetJS', benchLike()],
      ['LibreOffice', workbook('libreoffice.xls')],
      ['xlwt', workbook('xlwt.xls')],
    ] as const) {
      const ours = readBiff8(bytes)
      const theirs = sheetJs(bytes)
      expect(
        ours.map((s) => s.name),
        name,
      ).toEqual(theirs.map((s) => s.name))
      expect(
        ours.map((s) => s.merges),
        name,
      ).toEqual(theirs.map((s) => s.merges))
      ours.forEach((sheet, i) => {
        const a = cells(sheet)
        const b = cells(theirs[i])
        expect(Object.keys(a).length, `${name} ${sheet.name}`).toBe(Object.keys(b).length)
        for (const [ref, [t, v]] of Object.entries(b)) {
          // SheetJS moves dates before 1 March 1900 a day (Excel's phantom 29 February 1900); ours keep the workbook's serial.
          const expected = t === 'd' && (v as number) < 61 ? (v as number) - 1 : v
          if (t === 'd')
            expect(a[ref]?.[1] as number, `${name} ${sheet.name}!${ref}`).toBeCloseTo(expected as number, 5)
          else expect(a[ref], `${name} ${sheet.name}!${ref}`).toEqual([t, expected])
        }
      })
    }
  })

  it('reads every kind of value LibreOffice writes', () => {
    const [values, many, empty] = readBiff8(workbook('libreoffice.xls'))
    const v = cells(values)
    expect(v.B1).toEqual(['s', 'Ünïcødé ✓'])
    expect(v.D1).toEqual(['s', 'emoji 😀'])
    expect(v.E1).toEqual(['s', '  padded  '])
    expect([v.B2, v.C2, v.F2]).toEqual([
      ['n', 1],
      ['n', -7],
      ['n', 1e9],
    ])
    expect([v.B3, v.C3, v.E3]).toEqual([
      ['n', 1.25],
      ['n', 0.1],
      ['n', 123456789.123],
    ])
    expect([v.B4, v.C4, v.E4]).toEqual([
      ['n', 1e20],
      ['n', -2.5e300],
      ['n', 0.30000000000000004],
    ])
    expect([v.B5, v.C5]).toEqual([
      ['b', true],
      ['b', false],
    ])
    // 2024-03-01, 2024-03-01 12:30 and LibreOffice's 1900-01-01 (its serial 2) as serial days.
    expect([v.B6, v.C6, v.D6]).toEqual([
      ['d', 45352],
      ['d', 45352.520833333336],
      ['d', 2],
    ])
    // The 10,000-character string is split across CONTINUE records in the shared-string table.
    expect(v.B7).toEqual(['s', 'L'.repeat(10_000)])
    // Cached formula results: a number, a string (STRING record), a boolean, an error, an empty string.
    expect([v.B9, v.C9, v.D9, v.E9, v.F9]).toEqual([
      ['n', 3],
      ['s', 'ab'],
      ['b', true],
      ['e', 0x07],
      ['s', ''],
    ])
    expect(values.merges).toEqual([[10, 0, 11, 2]])
    const m = cells(many)
    expect(m.A2999).toEqual(['s', `item 2998 ${'ż'.repeat(2998 % 7)}`])
    expect(m.H3002).toEqual(['s', 'far'])
    expect(empty.rows.filter(Boolean)).toEqual([])
  })

  it('moves dates of the 1904 date system into the 1900 system, everything else as it is', () => {
    const in1900 = readBiff8(workbook('libreoffice.xls'))
    const in1904 = readBiff8(workbook('libreoffice-1904.xls'))
    const a = cells(in1904[0])
    const b = cells(in1900[0])
    expect(a.B6).toEqual(['d', 45352])
    // LibreOffice writes 1900-01-01 as -1460 in the 1904 system: not a date there, so a number.
    expect(a.D6).toEqual(['n', -1460])
    delete a.D6
    delete b.D6
    expect(a).toEqual(b)
    expect(cells(in1904[1])).toEqual(cells(in1900[1]))
  })

  it('tells a password-protected workbook by its FILEPASS record', () => {
    const bytes = benchLike()
    // Turn the globals' first record after BOF into a FILEPASS (the workbook stream starts with BOF).
    const bof = bytes.indexOf(Buffer.from([0x09, 0x08, 0x10, 0x00, 0x00, 0x06, 0x05, 0x00]))
    expect(bof).toBeGreaterThan(0)
    bytes.writeUInt16LE(0x002f, bof + 4 + 16)
    expect(() => readBiff8(bytes)).toThrow(EncryptedWorkbookError)
  })

  it('hands older formats to SheetJS', () => {
    const wb = XLSX.utils.book_new()
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['x']]), 'S')
    expect(() => readBiff8(XLSX.write(wb, { type: 'buffer', bookType: 'biff5' }) as Buffer)).toThrow(NotCoveredError)
    expect(() => readBiff8(Buffer.from('not a compound file, not at all'.repeat(20)))).toThrow(NotCoveredError)
  })

  it('ends any damaged workbook in NotCoveredError, never another error or a hang', () => {
    const original = workbook('libreoffice.xls')
    let seed = 42
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
    const outcomes = { read: 0, notCovered: 0 }
    for (let i = 0; i < 300; i++) {
      const bytes = Buffer.from(original)
      // A few bytes overwritten somewhere, or the file cut short.
      if (i % 10 === 9) bytes.fill(0, Math.floor(random() * bytes.length))
      else
        for (let k = 0; k < 4; k++)
          bytes[Math.floor(random() * (i % 2 ? 8192 : bytes.length))] = Math.floor(random() * 256)
      try {
        readBiff8(bytes)
        outcomes.read++
      } catch (err) {
        if (!(err instanceof NotCoveredError) && !(err instanceof EncryptedWorkbookError)) throw err
        outcomes.notCovered++
      }
    }
    expect(outcomes.notCovered).toBeGreaterThan(0)
    expect(outcomes.read).toBeGreaterThan(0)
  })

  it('calls a number format a date as SheetJS does', () => {
    for (const fmt of [
      'm/d/yy',
      'yyyy-mm-dd',
      'dd/mm/yyyy hh:mm:ss',
      'h:mm AM/PM',
      '[h]:mm:ss',
      '[$-409]mmmm d, yyyy',
      'B1yyyy',
    ])
      expect([fmt, isDateFormat(fmt)]).toEqual([fmt, true])
    for (const fmt of ['General', '0.00', '#,##0.00', '0.00E+00', '0%', '"day "0', '[Red]0.00', '\\d0', '# ?/?', '@'])
      expect([fmt, isDateFormat(fmt)]).toEqual([fmt, false])
    // The same verdict as SheetJS's own, for every built-in format.
    const table = (XLSX.SSF as unknown as { get_table(): Record<number, string> }).get_table()
    for (const fmt of Object.values(table)) expect([fmt, isDateFormat(fmt)]).toEqual([fmt, XLSX.SSF.is_date(fmt)])
  })
})
