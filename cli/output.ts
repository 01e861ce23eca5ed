import { stringify } from 'yaml'

/** `-o`: an aligned table (the default), a wider one, or the objects themselves as JSON or YAML. */
export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]

export interface Column<T> {
  header: string
  value: (row: T) => string | number | null | undefined
  /** Only with `-o wide`. */
  wide?: boolean
}

/** Rows aligned in columns three spaces apart, as kubectl prints them; the last column is not padded. */
export function alignedTable(rows: ReadonlyArray<ReadonlyArray<string>>): string {
  const widths: number[] = []
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)))
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i] - [...cell].length)))
        .join('   ')
        .trimEnd(),
    )
    .join('\n')
}

/** A list in the format asked for: the table's columns, or the objects (`shown`) as JSON or YAML. */
export function renderList<T>(
  format: OutputFormat,
  rows: readonly T[],
  columns: ReadonlyArray<Column<T>>,
  shown: (row: T) => unknown = (row) => row,
): string {
  if (format === 'json') return JSON.stringify(rows.map(shown), null, 2)
  if (format === 'yaml') return stringify(rows.map(shown)).trimEnd()
  const cols = columns.filter((c) => format === 'wide' || !c.wide)
  return alignedTable([cols.map((c) => c.header), ...rows.map((r) => cols.map((c) => cellText(c.value(r))))])
}

/** One object: `line` for the table formats, else the object as JSON or YAML. */
export function renderOne(format: OutputFormat, value: unknown, line: () => string): string {
  if (format === 'json') return JSON.stringify(value, null, 2)
  if (format === 'yaml') return stringify(value).trimEnd()
  return line()
}

function cellText(v: string | number | null | undefined): string {
  return v === null || v === undefined || v === '' ? '<none>' : String(v)
}

/** How long ago, as kubectl's AGE column says it: 42s, 5m, 3h, 12d. */
export function age(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '<none>'
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000))
  if (s < 120) return `${s}s`
  if (s < 7200) return `${Math.floor(s / 60)}m`
  if (s < 172_800) return `${Math.floor(s / 3600)}h`
  return `${Math.floor(s / 86_400)}d`
}
