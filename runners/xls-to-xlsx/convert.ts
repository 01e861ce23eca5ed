import { Worker } from 'node:worker_threads'
import { rejected } from '../common/runner-error.js'
import type { WorkerAnswer } from './convert.worker.js'
import { outputFileName } from '../common/file-names.js'

/** docs/api.md, Utilities; docs/security/sheetjs-residual-risk.md. */
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
  if (head[0] === 0x50 && head[1] === 0x4b)
    return 'The file is a ZIP package (an .xlsx or similar), not a legacy .xls workbook.'
  const text = head
    .toString('latin1')
    .replace(/^\xef\xbb\xbf/, '')
    .trimStart()
  if (text.startsWith('<')) return 'The file is XML or HTML, not a legacy binary .xls workbook.'
  return 'The file is not a legacy Excel workbook (.xls).'
}

/** The output's file name: the input's base name with .xlsx, or workbook.xlsx. */
export function xlsxFileName(inputName: string): string {
  return outputFileName(inputName, 'xlsx', 'workbook', /\.xls$/i)
}

export interface Converted {
  xlsx: Buffer
  sheets: number
  /** Whether Object.prototype was still empty inside the worker after parsing. */
  prototypeIntact: boolean
  /** Which reader read the workbook: our BIFF8 reader, or SheetJS for what it does not cover (and why). */
  reader: 'biff8' | 'sheetjs'
  fallback?: string
}

export interface ConvertOptions {
  parseMs?: number
  workerHeapMb?: number
  /** Tests only: hand any bytes to SheetJS, to show what the worker alone contains. */
  skipFormatCheck?: boolean
  /** The worker's program: the bundled convert.worker.js beside this module unless given (unit tests build it). */
  workerUrl?: URL
}

/** The parser worker, started ahead of its input. */
export interface Converter {
  /** Converts `bytes`, once; the time budget starts now. The worker stops when it has answered. */
  convert(bytes: Buffer): Promise<Converted>
}

/**
 * Starts the worker (convert.worker.ts) at once, with a heap budget, so that loading SheetJS
 * overlaps the download of the input; `convert` hands it the bytes and a time budget. The worker
 * parses and writes the .xlsx there, and only its bytes come back.
 */
export function startConverter(opts: ConvertOptions = {}): Converter {
  const parseMs = opts.parseMs ?? XLS_LIMITS.parseMs
  const heapMb = opts.workerHeapMb ?? XLS_LIMITS.workerHeapMb
  const worker = new Worker(opts.workerUrl ?? new URL('./convert.worker.js', import.meta.url), {
    // A 16 MB young generation: 32 MB let more garbage pile up (peak 205 → 188 MB on the bench workbook
    // at the same speed); 8 MB promoted more to the old generation (195 MB) and ran slower.
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    stdout: true,
    stderr: true,
  })
  let timer: NodeJS.Timeout | undefined
  let fail: (err: Error) => void = () => {}
  const answer = new Promise<Converted>((resolve, reject) => {
    fail = reject
    // The worker exits right after its answer: once an answer came, its exit is no failure.
    let answered = false
    worker.once('message', (m: WorkerAnswer) => {
      answered = true
      clearTimeout(timer)
      if (m.ok)
        return resolve({
          xlsx: Buffer.from(m.xlsx.buffer, m.xlsx.byteOffset, m.xlsx.byteLength),
          sheets: m.sheets,
          prototypeIntact: m.prototypeIntact,
          reader: m.reader,
          fallback: m.fallback,
        })
      if (m.stage === 'write')
        return reject(rejected(`The workbook could not be written as .xlsx (${m.message.slice(0, 200)}).`))
      // Our reader says so by type; from SheetJS (older formats) its message is the only sign.
      const encrypted = m.encrypted || /password|encrypt/i.test(m.message)
      reject(
        rejected(
          encrypted
            ? 'The workbook is password-protected (encrypted); it cannot be converted.'
            : `The workbook could not be read (${m.message}).`,
        ),
      )
    })
    worker.once('error', (err: Error & { code?: string }) => {
      clearTimeout(timer)
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY')
        reject(rejected(`The workbook needs more than ${heapMb} MB of memory to convert (memory limit).`))
      else reject(rejected(`The workbook could not be read (${err.message.slice(0, 200)}).`))
    })
    worker.once('exit', (code) => {
      clearTimeout(timer)
      if (!answered) reject(rejected(`The workbook could not be read (the converter stopped with code ${code}).`))
    })
  })
  // Awaited by convert; a worker that fails before it is asked must not go unhandled meanwhile.
  answer.catch(() => {})
  return {
    async convert(bytes) {
      try {
        const problem = opts.skipFormatCheck ? null : xlsFormatProblem(bytes)
        if (problem) throw rejected(problem)
        timer = setTimeout(
          () =>
            fail(
              rejected(
                `The workbook took longer than ${parseMs / 1000} s to convert (time limit); it may be crafted to be slow.`,
              ),
            ),
          parseMs,
        )
        // The input moves to the worker when it owns its memory whole (the runner needs it no more).
        const movable = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
        worker.postMessage({ bytes }, movable ? [bytes.buffer as ArrayBuffer] : [])
        return await answer
      } finally {
        clearTimeout(timer)
        await worker.terminate()
      }
    },
  }
}

/** Converts a legacy .xls to .xlsx, values only: startConverter, then convert. */
export function convertXls(bytes: Buffer, opts: ConvertOptions = {}): Promise<Converted> {
  return startConverter(opts).convert(bytes)
}
