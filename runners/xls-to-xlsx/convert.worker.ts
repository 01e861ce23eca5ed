// The parser worker of xls-to-xlsx (convert.ts starts it with a heap cap and a time budget). It
// freezes the shared prototypes before anything parses, so a pollution gadget has nothing to
// write to; reads the workbook with our own BIFF8 reader (biff8-reader.ts), or, for what that
// does not cover (BIFF5 and older, chart sheets, unusual layouts), with SheetJS, loaded only then,
// every optional feature off (values only: no formulas, styles, number formats, HTML, VBA or
// embedded files); writes the .xlsx itself (xlsx-writer.ts, not SheetJS's writer); and hands
// back only those bytes, transferred. Nothing of the workbook crosses to the runner's thread.
import { createRequire } from 'node:module'
import { parentPort } from 'node:worker_threads'
import { EncryptedWorkbookError, NotCoveredError, readBiff8 } from './biff8-reader.js'
import { type SheetData, writeXlsx } from './xlsx-writer.js'

for (const proto of [
  Object.prototype,
  Array.prototype,
  Function.prototype,
  String.prototype,
  Number.prototype,
  Boolean.prototype,
  RegExp.prototype,
  Date.prototype,
  Map.prototype,
  Set.prototype,
  Error.prototype,
]) {
  Object.freeze(proto)
}

/** What the worker answers with: the .xlsx and which reader read the workbook (and why not ours), or what failed. */
export type WorkerAnswer =
  | {
      ok: true
      xlsx: Uint8Array
      sheets: number
      prototypeIntact: boolean
      reader: 'biff8' | 'sheetjs'
      fallback?: string
    }
  | { ok: false; stage: 'read' | 'write'; message: string; encrypted?: boolean }

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
;(globalThis as { cptable?: unknown }).cptable = new Proxy(
  {},
  {
    get: (_, key) => (key === 'utils' ? utils : allCodepages()[key as string]),
    has: (_, key) => key in allCodepages(),
  },
)

interface DenseSheet extends Array<SheetData['rows'][number]> {
  '!ref'?: unknown
  '!merges'?: Array<{ s: { r: number; c: number }; e: { r: number; c: number } }>
}

const answer = (m: WorkerAnswer, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(m, transfer)

/** SheetJS's reading of the workbook, for what our BIFF8 reader does not cover. */
function readWithSheetJs(bytes: Uint8Array): SheetData[] {
  const XLSX = load('xlsx') as typeof import('xlsx')
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
  return wb.SheetNames.map((name) => {
    const ws = wb.Sheets[name] as unknown as DenseSheet | undefined
    const merges = Array.isArray(ws?.['!merges'])
      ? ws['!merges'].map((m): [number, number, number, number] => [m.s.r, m.s.c, m.e.r, m.e.c])
      : []
    // The dense rows as they are: the writer reads each cell's type and value.
    return { name: String(name), merges, rows: Array.isArray(ws) ? ws : [] }
  })
}

async function convert(bytes: Uint8Array): Promise<void> {
  let sheets: SheetData[]
  let reader: 'biff8' | 'sheetjs' = 'biff8'
  let fallback: string | undefined
  try {
    try {
      sheets = readBiff8(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    } catch (err) {
      if (err instanceof EncryptedWorkbookError) throw err
      // Not ours to read (or a layout ours does not expect): SheetJS reads what it can.
      fallback =
        err instanceof NotCoveredError
          ? err.message
          : `unexpected: ${String((err as Error)?.message ?? err).slice(0, 200)}`
      reader = 'sheetjs'
      sheets = readWithSheetJs(bytes)
    }
  } catch (err) {
    if (err instanceof EncryptedWorkbookError)
      return answer({ ok: false, stage: 'read', message: err.message, encrypted: true })
    return answer({ ok: false, stage: 'read', message: String((err as Error)?.message ?? err).slice(0, 300) })
  }
  let xlsx: Buffer
  try {
    xlsx = await writeXlsx(sheets)
  } catch (err) {
    return answer({ ok: false, stage: 'write', message: String((err as Error)?.message ?? err).slice(0, 300) })
  }
  const whole = xlsx.byteOffset === 0 && xlsx.byteLength === xlsx.buffer.byteLength
  answer(
    {
      ok: true,
      xlsx,
      sheets: sheets.length,
      prototypeIntact: Object.keys(Object.prototype).length === 0,
      reader,
      fallback,
    },
    whole ? [xlsx.buffer as ArrayBuffer] : [],
  )
}

parentPort!.once('message', (m: { bytes: Uint8Array }) => void convert(m.bytes))
