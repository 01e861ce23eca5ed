import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { rejected } from '../common/runner-error.js'
import { type SheetData, writeXlsx } from './xlsx-writer.js'

/** README: Decisions the spec leaves open; docs/security/sheetjs-residual-risk.md. */
export const XLS_LIMITS = {
  maxInputBytes: 50 * 1024 ** 2,
  /** The parse runs in a worker that is terminated past this (contains CVE-2024-22363 and kin). */
  parseMs: 60_000,
  /** The worker's V8 heap; past it the worker dies, not the runner. */
  workerHeapMb: 256,
}

const CFB_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])

/**
 * Only legacy binary workbooks are parsed: a Compound File (BIFF5/BIFF8 .xls) or a bare
 * BIFF2–4 stream. SheetJS would also accept ZIP (OOXML), XML, HTML, CSV and a dozen other
 * formats by sniffing, and the known SheetJS vulnerabilities live in those parsers (the
 * comment handling of OOXML, the comment-stripping regex of XML), so they never reach it.
 */
export function xlsFormatProblem(bytes: Uint8Array): string | null {
  if (bytes.length < 8) return 'The file is too short to be an Excel workbook.'
  const head = Buffer.from(bytes.subarray(0, 8))
  if (head.equals(CFB_MAGIC)) return null
  if (head[0] === 0x09 && head[1] <= 0x08 && head[2] >= 0x04 && head[3] === 0x00) return null // BIFF2–4 BOF record
  if (head[0] === 0x50 && head[1] === 0x4b) return 'The file is a ZIP package (an .xlsx or similar), not a legacy .xls workbook.'
  const text = head.toString('latin1').replace(/^\xef\xbb\xbf/, '').trimStart()
  if (text.startsWith('<')) return 'The file is XML or HTML, not a legacy binary .xls workbook.'
  return 'The file is not a legacy Excel workbook (.xls).'
}

/** The output's file name: the input's base name with .xlsx, or workbook.xlsx. */
export function xlsxFileName(inputName: string): string {
  const base = inputName.replace(/\.xls$/i, '').replace(/[^\w.\- ]+/g, '_').replace(/^[.\s]+/, '').slice(0, 100).trim()
  return `${base || 'workbook'}.xlsx`
}

/**
 * The worker's program (CommonJS, run with eval so that it needs no file of its own). It
 * freezes the shared prototypes before SheetJS loads, so a pollution gadget has nothing to
 * write to, parses with every optional feature off (values only: no formulas, styles, number
 * formats, HTML, VBA or embedded files), and hands back plain data: per sheet its name, range,
 * merges and rows of [type, value] pairs. The .xlsx is written from that data outside, by
 * xlsx-writer.ts (not SheetJS).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
for (const proto of [Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype,
  Boolean.prototype, RegExp.prototype, Date.prototype, Map.prototype, Set.prototype, Error.prototype]) Object.freeze(proto)
// SheetJS builds every codepage table (CJK included) when it loads cpexcel.js: ~90 ms before any
// work. BIFF8 text is UTF-16, which Node decodes itself; the tables load only when a workbook
// uses another codepage (BIFF5 and older).
let codepages
const allCodepages = () => (codepages = codepages || require(workerData.cpexcelPath))
globalThis.cptable = new Proxy({}, { get: (_, key) => key === 'utils' ? utils : allCodepages()[key], has: (_, key) => key in allCodepages() })
const utils = new Proxy({}, { get: (_, key) => key === 'decode' ? decode : allCodepages().utils[key] })
function decode(cp, data) {
  if (cp === 1200) return Buffer.from(data).toString('utf16le')
  if (cp === 65001) return Buffer.from(data).toString('utf8')
  return allCodepages().utils.decode(cp, data)
}
const XLSX = require(workerData.xlsxPath)
try {
  const input = Buffer.from(workerData.bytes.buffer, workerData.bytes.byteOffset, workerData.bytes.byteLength)
  const wb = XLSX.read(input, { type: 'buffer', dense: true, cellFormula: false, cellHTML: false, cellNF: false,
    cellStyles: false, cellText: false, cellDates: true, sheetStubs: false, bookVBA: false, bookFiles: false,
    bookDeps: false, WTF: false })
  const sheets = []
  for (const name of wb.SheetNames) {
    const ws = wb.Sheets[name] || []
    const rows = []
    const n = Array.isArray(ws) ? ws.length : 0
    for (let r = 0; r < n; r++) {
      const row = ws[r]
      if (!Array.isArray(row)) { rows.push(null); continue }
      const out = []
      for (let c = 0; c < row.length; c++) {
        const cell = row[c]
        out.push(cell && cell.t !== 'z' && cell.v !== undefined ? [String(cell.t), cell.v instanceof Date ? cell.v : (typeof cell.v === 'object' ? String(cell.v) : cell.v)] : null)
      }
      rows.push(out)
    }
    const merges = Array.isArray(ws['!merges']) ? ws['!merges'].map((m) => [m.s.r, m.s.c, m.e.r, m.e.c]) : []
    sheets.push({ name: String(name), ref: typeof ws['!ref'] === 'string' ? ws['!ref'] : null, merges, rows })
  }
  parentPort.postMessage({ ok: true, sheets, prototypeIntact: Object.keys(Object.prototype).length === 0 })
} catch (err) {
  parentPort.postMessage({ ok: false, message: String((err && err.message) || err).slice(0, 300) })
}
`

export interface Converted {
  xlsx: Buffer
  sheets: number
  /** Whether Object.prototype was still empty inside the worker after parsing. */
  prototypeIntact: boolean
}

export interface ConvertOptions {
  parseMs?: number
  workerHeapMb?: number
  /** Tests only: hand any bytes to SheetJS, to show what the worker alone contains. */
  skipFormatCheck?: boolean
}

const require = createRequire(import.meta.url)

/** Converts a legacy .xls to .xlsx, values only, in a worker with a time and heap budget. */
export async function convertXls(bytes: Buffer, opts: ConvertOptions = {}): Promise<Converted> {
  const problem = opts.skipFormatCheck ? null : xlsFormatProblem(bytes)
  if (problem) throw rejected(problem)
  const parseMs = opts.parseMs ?? XLS_LIMITS.parseMs
  const heapMb = opts.workerHeapMb ?? XLS_LIMITS.workerHeapMb
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { bytes, xlsxPath: require.resolve('xlsx'), cpexcelPath: require.resolve('xlsx/dist/cpexcel.js') },
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    stdout: true,
    stderr: true,
  })
  try {
    return await new Promise<Converted>((resolve, reject) => {
      const timer = setTimeout(() => reject(rejected(`The workbook took longer than ${parseMs / 1000} s to convert (time limit); it may be crafted to be slow.`)), parseMs)
      // The worker exits right after its answer, while the .xlsx is still being written from it:
      // once an answer came, its exit is no failure.
      let answered = false
      worker.once('message', (m: { ok: true; sheets: SheetData[]; prototypeIntact: boolean } | { ok: false; message: string }) => {
        answered = true
        clearTimeout(timer)
        if (!m.ok) return reject(rejected(/password|encrypt/i.test(m.message) ? 'The workbook is password-protected (encrypted); it cannot be converted.' : `The workbook could not be read (${m.message}).`))
        writeXlsx(m.sheets).then(
          (xlsx) => resolve({ xlsx, sheets: m.sheets.length, prototypeIntact: m.prototypeIntact }),
          (err: Error) => reject(rejected(`The workbook could not be written as .xlsx (${err.message.slice(0, 200)}).`)),
        )
      })
      worker.once('error', (err: Error & { code?: string }) => {
        clearTimeout(timer)
        if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') reject(rejected(`The workbook needs more than ${heapMb} MB of memory to convert (memory limit).`))
        else reject(rejected(`The workbook could not be read (${err.message.slice(0, 200)}).`))
      })
      worker.once('exit', (code) => {
        clearTimeout(timer)
        if (!answered) reject(rejected(`The workbook could not be read (the converter stopped with code ${code}).`))
      })
    })
  } finally {
    await worker.terminate()
  }
}
