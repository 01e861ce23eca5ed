import XLSX from 'xlsx'
import { describe, expect, inject, it } from 'vitest'
import { api, download } from './helpers/api.js'
import { runnerPods } from './helpers/keys.js'
import { jobOutputs } from './helpers/storage.js'
import { hostile } from '../support/fixtures.js'
import { jobInputs } from './helpers/job-inputs.js'

const inputs = jobInputs()
const { files } = inputs

const XLS = 'application/vnd.ms-excel'
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
const convert = (url: string) => api('POST', '/v1/utilities/xls-to-xlsx', { key: inputs.key, body: { input: { url } } })

function workbook(): Buffer {
  const data = XLSX.utils.aoa_to_sheet(
    [
      ['item', 'qty', 'due'],
      ['bolts', 12, new Date(Date.UTC(2024, 0, 31))],
      ['nuts', 7.5, new Date(Date.UTC(2024, 1, 29))],
    ],
    { cellDates: true },
  )
  data.D2 = { t: 'n', v: 19.5, f: 'B2+B3' }
  data['!ref'] = 'A1:D3'
  const wb = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(wb, data, 'Orders')
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['note'], ['second sheet']]), 'Notes')
  return XLSX.write(wb, { type: 'buffer', bookType: 'biff8' }) as Buffer
}

describe('xls-to-xlsx through the whole platform', () => {
  it('given a two-sheet .xls, a sync run answers 200 with an .xlsx holding every sheet, values only', async () => {
    const res = await convert(files.add('Orders%202024.xls', workbook(), XLS))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ utility: 'xls-to-xlsx', status: 'succeeded', error: null })
    const [file] = res.body.result.files
    expect(file).toMatchObject({
      name: 'Orders 2024.xlsx',
      contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    })
    expect(file.key).toBe(`xls-to-xlsx/${res.body.createdAt.slice(0, 10)}/${res.body.id}/Orders 2024.xlsx`)
    const got = await download(file.url)
    expect(got.bytes.length).toBe(file.size)
    const back = XLSX.read(got.bytes, { cellDates: true, cellFormula: true })
    expect(back.SheetNames).toEqual(['Orders', 'Notes'])
    const rows = XLSX.utils.sheet_to_json<unknown[]>(back.Sheets.Orders, { header: 1 })
    expect(rows[0]).toEqual(['item', 'qty', 'due'])
    expect(rows[1].slice(0, 2)).toEqual(['bolts', 12])
    expect((rows[2][2] as Date).toISOString().slice(0, 10)).toBe('2024-02-29')
    expect(back.Sheets.Orders.D2).toMatchObject({ v: 19.5 })
    expect(back.Sheets.Orders.D2.f).toBeUndefined() // values only
    expect(XLSX.utils.sheet_to_json(back.Sheets.Notes, { header: 1 })).toEqual([['note'], ['second sheet']])
  })

  it('converts a workbook sent in the request (an upload of the key), answering the .xlsx itself', async () => {
    const form = new FormData()
    form.append('file', new Blob([workbook()]), 'Budget 2025.xls')
    const res = await fetch(`${inject('gatewayUrl')}/v1/utilities/xls-to-xlsx`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${inputs.key}`, Accept: XLSX_TYPE },
      body: form,
    })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(res.headers.get('content-type')).toBe(XLSX_TYPE)
    expect(res.headers.get('content-disposition')).toContain('filename="Budget 2025.xlsx"')
    const back = XLSX.read(Buffer.from(await res.arrayBuffer()))
    expect(back.SheetNames).toEqual(['Orders', 'Notes'])
  })

  it.each([
    ['cve-2023-30533-prototype-pollution.xls', 'ZIP package'],
    ['cve-2024-22363-redos.xls', 'XML or HTML'],
  ])('given %s, the run fails at once as upstream_rejected (%s), one pod, no output', async (fixture, why) => {
    const t0 = Date.now()
    const res = await convert(files.add(fixture, hostile(fixture), XLS))
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ status: 'failed', result: null, error: { code: 'upstream_rejected' } })
    expect(res.body.error.message).toContain(why)
    expect(Date.now() - t0).toBeLessThan(30_000) // the ReDoS file would take minutes to parse
    expect(await jobOutputs(res.body)).toEqual([])
    expect(await runnerPods(res.body.id)).toBe(1)
  })
})
