import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { age, alignedTable, renderList, renderOne } from './output.js'

interface Row {
  id: string
  n: number | null
}
const rows: Row[] = [
  { id: 'job_1', n: 3 },
  { id: 'job_10000', n: null },
]
const columns = [
  { header: 'ID', value: (r: Row) => r.id },
  { header: 'N', value: (r: Row) => r.n },
  { header: 'MORE', value: () => 'x', wide: true },
]

describe('CLI output', () => {
  it('aligns columns three spaces apart, with no trailing spaces', () => {
    expect(
      alignedTable([
        ['ID', 'STATUS'],
        ['job_123', 'ok'],
      ]),
    ).toBe('ID        STATUS\njob_123   ok')
  })

  it('prints tables (wide adds columns; an empty value is <none>), JSON and YAML', () => {
    expect(renderList('table', rows, columns)).toBe('ID          N\njob_1       3\njob_10000   <none>')
    expect(renderList('wide', rows, columns).split('\n')[0]).toBe('ID          N        MORE')
    expect(JSON.parse(renderList('json', rows, columns))).toEqual(rows)
    expect(parse(renderList('yaml', rows, columns, (r) => ({ id: r.id })))).toEqual([
      { id: 'job_1' },
      { id: 'job_10000' },
    ])
    expect(renderOne('table', { a: 1 }, () => 'line')).toBe('line')
    expect(parse(renderOne('yaml', { a: 1 }, () => 'line'))).toEqual({ a: 1 })
  })

  it('says ages as kubectl does', () => {
    const now = Date.parse('2026-01-10T00:00:00Z')
    expect(age('2026-01-09T23:59:15Z', now)).toBe('45s')
    expect(age('2026-01-09T23:00:00Z', now)).toBe('60m')
    expect(age('2026-01-09T12:00:00Z', now)).toBe('12h')
    expect(age('2026-01-01T00:00:00Z', now)).toBe('9d')
    expect(age(null, now)).toBe('<none>')
  })
})
