// The parser worker of xls-to-xlsx (convert.ts starts it with a heap cap and a time budget). It
// freezes the shared prototypes before SheetJS loads, so a pollution gadget has nothing to write
// to; parses with every optional feature off (values only: no formulas, styles, number formats,
// HTML, VBA or embedded files); writes the .xlsx itself, straight from SheetJS's dense rows
// (xlsx-writer.ts, not SheetJS's writer); and hands back only those bytes, transferred. Nothing
// of the workbook crosses to the runner's thread: no copy of its cells is ever made (writing here
// took the runner's peak memory from 227 MB to below LibreOffice's; docs/benchmarks.md).
import { createRequire } from 'node:module'
import { parentPort } from 'node:worker_threads'
import { type SheetData, writeXlsx } from './xlsx-writer.js'

for (const proto of [Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype, Boolean.prototype, RegExp.prototype, Date.prototype, Map.prototype, Set.prototype, Error.prototype]) {
  Object.freeze(proto)
}

/** What the worker answers with. */
export type WorkerAnswer = { ok: true; xlsx: Uint8Array; sheets: number; prototypeIntact: boolean } | { ok: false; stage: 'read' | 'write'; message: string }

const load = createRequire(import.meta.url)

// SheetJS builds every codepage table (CJK included) when it loads cpexcel.js: ~90 ms before any
// work. BIFF8 text is UTF-16, which Node decodes itself; the tables load only when a workbook
// uses another codepage (BIFF5 and older).
type Codepages = { utils: Record<string, unknown> } & Record<string, unknown>
let codepages: Codepages | undefined
const allCodepages = (): Codepages => (codepages ??= load('xlsx/dist/cpexcel.js') as Codepages)
const decode = (cp: number, data: Uint8Array) => {
  if (cp === 1200) return Buffer.from(data).toString('utf16le')
  if (cp === 65001) return Buffer.from(data).toString('utf8')
  return (allCodepages().utils.decode as (cp: number, data: Uint8Array) => string)(cp, data)
}
const utils = new Proxy({}, { get: (_, key) => (key === 'decode' ? decode : allCodepages().utils[key as string]) })
;(globalThis as { cptable?: unknown }).cptable = new Proxy({}, { get: (_, key) => (key === 'utils' ? utils : allCodepages()[key as string]), has: (_, key) => key in allCodepages() })

interface DenseSheet extends Array<SheetData['rows'][number]> {
  '!ref'?: unknown
  '!merges'?: Array<{ s: { r: number; c: number }; e: { r: number; c: number } }>
}

const answer = (m: WorkerAnswer, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(m, transfer)

// Loaded now, while the runner still downloads the input (startConverter starts this worker first).
const XLSX = load('xlsx') as typeof import('xlsx')

async function convert(bytes: Uint8Array): Promise<void> {
  let sheets: SheetData[]
  try {
    const wb = XLSX.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
      type: 'buffer',
      dense: true,
      cellFormula: false,
      cellHTML: false,
      cellNF: false,
      cellStyles: false,
      cellText: false,
      cellDates: true,
      sheetStubs: false,
      bookVBA: false,
      bookFiles: false,
      bookDeps: false,
      WTF: false,
    })
    sheets = wb.SheetNames.map((name) => {
      const ws = wb.Sheets[name] as unknown as DenseSheet | undefined
      const merges = Array.isArray(ws?.['!merges']) ? ws['!merges'].map((m): [number, number, number, number] => [m.s.r, m.s.c, m.e.r, m.e.c]) : []
      // The dense rows as they are: the writer reads each cell's type and value.
      return { name: String(name), merges, rows: Array.isArray(ws) ? ws : [] }
    })
  } catch (err) {
    return answer({ ok: false, stage: 'read', message: String((err as Error)?.message ?? err).slice(0, 300) })
  }
  let xlsx: Buffer
  try {
    xlsx = await writeXlsx(sheets)
  } catch (err) {
    return answer({ ok: false, stage: 'write', message: String((err as Error)?.message ?? err).slice(0, 300) })
  }
  const whole = xlsx.byteOffset === 0 && xlsx.byteLength === xlsx.buffer.byteLength
  answer({ ok: true, xlsx, sheets: sheets.length, prototypeIntact: Object.keys(Object.prototype).length === 0 }, whole ? [xlsx.buffer as ArrayBuffer] : [])
}

parentPort!.once('message', (m: { bytes: Uint8Array }) => void convert(m.bytes))
