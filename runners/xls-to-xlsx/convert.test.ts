import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import XLSX from 'xlsx'
import { describe, expect, it } from 'vitest'
import { bundledWorker } from '../../test/support/bundled-worker.js'
import { type ConvertOptions, convertXls as convertWith, xlsFormatProblem, xlsxFileName } from './convert.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const fixture = (name: string) => readFileSync(join(REPO, 'test/fixtures/hostile', name))

// The worker runs as the runner runs it: bundled (runners/bundle-runners.ts), SheetJS loaded from node_modules.
const worker = bundledWorker('runners/xls-to-xlsx/convert.worker.ts', ['xlsx'])
const convertXls = (bytes: Buffer, opts: ConvertOptions = {}) => convertWith(bytes, { workerUrl: worker.url, ...opts })

function sampleXls(): Buffer {
  const data = XLSX.utils.aoa_to_sheet(
    [
      ['name', 'amount', 'when'],
      ['a', 1.5, new Date(Date.UTC(2024, 2, 1))],
      ['b', 2, new Date(Date.UTC(2024, 3, 1))],
    ],
    { cellDates: true },
  )
  data.D2 = { t: 'n', v: 3.5, f: 'B2+B3' }
  data['!ref'] = 'A1:D3'
  const wb = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(wb, data, 'Data')
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['x'], [42]]), 'Other')
  return XLSX.write(wb, { type: 'buffer', bookType: 'biff8' }) as Buffer
}

describe('xls-to-xlsx conversion', () => {
  it('keeps every sheet and the values, drops formulas', async () => {
    const out = await convertXls(sampleXls())
    expect(out.sheets).toBe(2)
    expect(out.prototypeIntact).toBe(true)
    const back = XLSX.read(out.xlsx, { cellFormula: true, cellDates: true })
    expect(back.SheetNames).toEqual(['Data', 'Other'])
    const rows = XLSX.utils.sheet_to_json<unknown[]>(back.Sheets.Data, { header: 1 })
    expect(rows[1].slice(0, 2)).toEqual(['a', 1.5])
    expect((rows[1][2] as Date).toISOString().slice(0, 10)).toBe('2024-03-01')
    expect(back.Sheets.Data.D2).toMatchObject({ t: 'n', v: 3.5 })
    expect(back.Sheets.Data.D2.f).toBeUndefined()
    expect(XLSX.utils.sheet_to_json(back.Sheets.Other, { header: 1 })).toEqual([['x'], [42]])
  })

  it('keeps text in every codepage: UTF-16 (BIFF8) decoded by Node, 8-bit text (BIFF5) by the codepage tables', async () => {
    const book = (rows: string[][]) => {
      const wb = XLSX.utils.book_new()
      XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(rows), 'Feuille')
      return wb
    }
    const biff8 = XLSX.write(book([['Ünïcødé ✓', 'x < y & "z"']]), { type: 'buffer', bookType: 'biff8' }) as Buffer
    const back8 = XLSX.read((await convertXls(biff8)).xlsx)
    expect(XLSX.utils.sheet_to_json(back8.Sheets.Feuille, { header: 1 })).toEqual([['Ünïcødé ✓', 'x < y & "z"']])
    // SheetJS writes BIFF5 text as ASCII only: put a Windows-1252 é (0xE9) into the cell's bytes.
    const biff5 = XLSX.write(book([['cafe!']]), { type: 'buffer', bookType: 'biff5' }) as Buffer
    biff5[biff5.indexOf('cafe!') + 3] = 0xe9
    const back5 = XLSX.read((await convertXls(biff5)).xlsx)
    expect(XLSX.utils.sheet_to_json(back5.Sheets.Feuille, { header: 1 })).toEqual([['café!']])
  })

  it('only lets binary workbooks reach the parser', () => {
    expect(xlsFormatProblem(sampleXls())).toBeNull()
    expect(xlsFormatProblem(fixture('cve-2023-30533-prototype-pollution.xls'))).toContain('ZIP package')
    expect(xlsFormatProblem(fixture('cve-2024-22363-redos.xls'))).toContain('XML or HTML')
    expect(xlsFormatProblem(Buffer.from('a,b\n1,2\n'))).toContain('not a legacy Excel workbook')
    expect(xlsFormatProblem(Buffer.from('x'))).toContain('too short')
  })

  it('refuses both CVE fixtures at the format gate, at once', async () => {
    const t0 = Date.now()
    await expect(convertXls(fixture('cve-2023-30533-prototype-pollution.xls'))).rejects.toMatchObject({
      code: 'upstream_rejected',
    })
    await expect(convertXls(fixture('cve-2024-22363-redos.xls'))).rejects.toMatchObject({ code: 'upstream_rejected' })
    expect(Date.now() - t0).toBeLessThan(1000)
  })

  it('CVE-2023-30533: the fixture pollutes Object.prototype in a bare SheetJS process', () => {
    // In a child process, so this test's own realm stays clean.
    const out = execFileSync(
      process.execPath,
      [
        '-e',
        `const X = require('xlsx'); X.read(require('fs').readFileSync(${JSON.stringify(join(REPO, 'test/fixtures/hostile/cve-2023-30533-prototype-pollution.xls'))})); process.stdout.write(String(Object.keys(Object.prototype)))`,
      ],
      { cwd: REPO, encoding: 'utf8' },
    )
    expect(out).toBe('c')
  })

  it('CVE-2023-30533: even past the gate, the worker keeps the pollution out of the runner', async () => {
    await convertXls(fixture('cve-2023-30533-prototype-pollution.xls'), { skipFormatCheck: true }).catch(
      () => undefined,
    )
    expect(Object.keys(Object.prototype)).toEqual([])
    expect(({} as { c?: unknown }).c).toBeUndefined()
  })

  it('CVE-2024-22363: even past the gate, the worker is stopped at its time budget', async () => {
    const t0 = Date.now()
    await expect(
      convertXls(fixture('cve-2024-22363-redos.xls'), { skipFormatCheck: true, parseMs: 1000 }),
    ).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringContaining('took longer than 1 s'),
    })
    expect(Date.now() - t0).toBeLessThan(5000)
  })

  it('names the output after the input', () => {
    expect(xlsxFileName('Report 2024.xls')).toBe('Report 2024.xlsx')
    expect(xlsxFileName('download')).toBe('download.xlsx')
    expect(xlsxFileName('')).toBe('workbook.xlsx')
  })
})
