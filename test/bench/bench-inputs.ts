import { createHash } from 'node:crypto'
import XLSX from 'xlsx'

/** The inputs of the runner benchmarks (make bench, make bench-memory-limits). */

/** Deterministic, moderately compressible text (log-like lines with hex noise). */
export function textFile(seed: number, bytes: number): Buffer {
  const lines: string[] = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const h = createHash('sha1').update(`${seed}:${i}`).digest('hex')
    const line = `2024-05-${String((i % 28) + 1).padStart(2, '0')} INFO request id=${h.slice(0, 12)} user=${h.slice(12, 18)} took=${parseInt(h.slice(18, 21), 16)}ms path=/api/v1/items/${i}\n`
    lines.push(line)
    size += line.length
  }
  return Buffer.from(lines.join('')).subarray(0, bytes)
}

/** A report page: a heading, a paragraph and a table of `rowCount` rows, styled by /files/bench.css. */
export function benchPage(rowCount = 400): Buffer {
  const rows = Array.from(
    { length: rowCount },
    (_, i) =>
      `<tr><td>${i + 1}</td><td>Item ${i}</td><td>${(i * 3.7).toFixed(2)}</td><td>${i % 2 ? 'open' : 'paid'}</td></tr>`,
  ).join('')
  return Buffer.from(`<!doctype html><html><head><meta charset="utf-8"><title>Report</title><link rel="stylesheet" href="/files/bench.css"></head>
<body><h1>Quarterly report</h1><p>${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(40)}</p>
<table><thead><tr><th>#</th><th>Item</th><th>Amount</th><th>State</th></tr></thead><tbody>${rows}</tbody></table></body></html>`)
}

export function benchWorkbook(): Buffer {
  const wb = XLSX.utils.book_new()
  for (let s = 1; s <= 4; s++) {
    const aoa: unknown[][] = [['id', 'name', 'amount', 'rate', 'city', 'code', 'qty', 'note']]
    for (let r = 1; r <= 5000; r++)
      aoa.push([
        r,
        `name ${r}`,
        r * 1.25,
        (r % 97) / 100,
        ['Oslo', 'Lyon', 'Kyiv', 'Porto'][r % 4],
        `C-${(r * 7919) % 10000}`,
        r % 13,
        r % 5 ? '' : `note ${r}`,
      ])
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(aoa), `Sheet${s}`)
  }
  return XLSX.write(wb, { type: 'buffer', bookType: 'biff8' }) as Buffer
}
