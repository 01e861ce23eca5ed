/**
 * xls-to-xlsx's own reader of BIFF8 workbooks (Excel 97–2003 .xls, MS-XLS), values only: the
 * records that hold cell values in the files Excel, LibreOffice and the usual libraries write
 * (shared strings, LABEL, NUMBER, RK, MULRK, BOOLERR, cached FORMULA results, merged cells) and
 * the few that give them meaning (date system, number formats, sheet list). It is 5–10× faster
 * than SheetJS's parser on them and never loads SheetJS (docs/benchmarks.md).
 *
 * Anything else — BIFF5 and older, chart or macro sheets, records of a layout it does not know,
 * a malformed file — ends in `NotCoveredError`, and the worker hands the file to SheetJS, which
 * reads what this does not. A password-protected workbook ends in `EncryptedWorkbookError`.
 * Every read is bounds-checked by Buffer, so a crafted file fails, it cannot read outside.
 */
import { CfbError, readCfbStream } from '../common/cfb-reader.js'
import type { CellData, SheetData } from './xlsx-writer.js'

/** The workbook is outside what this reader covers: SheetJS reads it instead. */
export class NotCoveredError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'NotCoveredError'
  }
}

/** The workbook is password-protected (a FILEPASS record): nothing can be read without the password. */
export class EncryptedWorkbookError extends Error {
  constructor() {
    super('the workbook is password-protected (encrypted)')
    this.name = 'EncryptedWorkbookError'
  }
}

const R = {
  BOF: 0x0809,
  EOF: 0x000a,
  FILEPASS: 0x002f,
  CONTINUE: 0x003c,
  DATEMODE: 0x0022,
  FORMAT: 0x041e,
  XF: 0x00e0,
  SST: 0x00fc,
  BOUNDSHEET: 0x0085,
  NUMBER: 0x0203,
  RK: 0x027e,
  MULRK: 0x00bd,
  LABELSST: 0x00fd,
  LABEL: 0x0204,
  BOOLERR: 0x0205,
  FORMULA: 0x0006,
  STRING: 0x0207,
  MERGECELLS: 0x00e5,
} as const

/** Value records of BIFF2–5 (and the rich-text label, RSTRING) that BIFF8 writers do not use: met, they hand over to SheetJS. */
const OLDER_VALUE_RECORDS = new Set([0x0002, 0x0003, 0x0004, 0x0005, 0x0007, 0x00d6, 0x0206, 0x0406])

const BIFF8 = 0x0600
const DT_GLOBALS = 0x0005
const DT_WORKSHEET = 0x0010
const SHEET_WORKSHEET = 0

/** Excel's serial-day limit (9999-12-31); SheetJS leaves larger or negative "dates" as numbers, and so does this. */
const MAX_SERIAL = 2_958_465
/** Days between the 1900 and 1904 date systems. */
const DAYS_1904 = 1462

/**
 * Built-in number formats that are dates or times: 14–22 and 45–47 everywhere; 27–36 and 50–58
 * are the East Asian locales' date formats.
 */
const BUILTIN_DATE_FORMATS = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56,
  57, 58,
])

/**
 * Whether a number format shows a date or time: a y, m, d, h, s, e, g or b token, AM/PM or
 * A/P, or an elapsed-time [h]/[m]/[s] section, outside quoted text, escapes, padding, other
 * bracketed sections and number runs (so 0.00E+00 is no date). It is the tokenizer SheetJS
 * applies, so both readers call the same cells dates.
 */
export function isDateFormat(fmt: string): boolean {
  for (let i = 0; i < fmt.length;) {
    const c = fmt[i]
    switch (c) {
      case 'G':
        i += fmt.slice(i, i + 7).toLowerCase() === 'general' ? 7 : 1
        break
      case '"': {
        const end = fmt.indexOf('"', i + 1)
        i = end < 0 ? fmt.length : end + 1
        break
      }
      case '\\':
      case '_':
        i += 2
        break
      case '*':
        i += fmt[i + 1] === ' ' || fmt[i + 1] === '*' ? 2 : 1
        break
      case 'B': // b1/b2 (Buddhist and Hijri years), and like SheetJS any other b
      case 'b':
      case 'y':
      case 'Y':
      case 'm':
      case 'M':
      case 'd':
      case 'D':
      case 'h':
      case 'H':
      case 's':
      case 'S':
      case 'e':
      case 'E':
      case 'g':
        return true
      case 'A':
      case 'a':
        if (fmt.slice(i, i + 5).toUpperCase() === 'AM/PM' || fmt.slice(i, i + 3).toUpperCase() === 'A/P') return true
        i++
        break
      case '上':
        if (fmt.startsWith('上午/下午', i)) return true
        i++
        break
      case '[': {
        const end = fmt.indexOf(']', i + 1)
        if (/^[HhMmSs\u0E0E]*$/.test(fmt.slice(i + 1, end < 0 ? fmt.length : end))) return true
        i = end < 0 ? fmt.length : end + 1
        break
      }
      case '.':
      case '0':
      case '#':
        // A number run, its exponent included.
        for (i++; i < fmt.length && '0#?.,E+-%'.includes(fmt[i]); i++) {}
        break
      case '?':
        for (i++; fmt[i] === '?'; i++) {}
        break
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        for (i++; i < fmt.length && fmt[i] >= '0' && fmt[i] <= '9'; i++) {}
        break
      default:
        i++
    }
  }
  return false
}

/** A record's bytes followed by those of its CONTINUE records, read as one run, for strings that may be split. */
class Continued {
  private seg = 0
  private at = 0
  constructor(private readonly parts: Buffer[]) {}

  private current(): Buffer {
    while (this.at >= this.parts[this.seg].length) {
      if (++this.seg >= this.parts.length) throw new NotCoveredError('a record ends before its data')
      this.at = 0
    }
    return this.parts[this.seg]
  }

  u8(): number {
    const b = this.current()
    return b[this.at++]
  }

  u16(): number {
    return this.u8() | (this.u8() << 8)
  }

  u32(): number {
    return (this.u16() | (this.u16() << 16)) >>> 0
  }

  skip(n: number): void {
    while (n > 0) {
      const b = this.current()
      const take = Math.min(n, b.length - this.at)
      this.at += take
      n -= take
    }
  }

  /**
   * An XLUnicodeRichExtendedString (MS-XLS 2.5.293), or the plain XLUnicodeString when `rich`
   * is false. Where its characters cross into a CONTINUE record, that record starts with a new
   * option byte saying whether the rest is 8- or 16-bit.
   */
  string(rich: boolean): string {
    const cch = this.u16()
    const flags = this.u8()
    let high = flags & 0x01
    const runs = rich && flags & 0x08 ? this.u16() : 0
    const ext = rich && flags & 0x04 ? this.u32() : 0
    let text = ''
    for (let left = cch; left > 0;) {
      let b = this.parts[this.seg]
      if (this.at >= b.length) {
        b = this.current()
        high = this.u8() & 0x01
        if (this.at >= b.length) continue
      }
      const avail = b.length - this.at
      const take = Math.min(left, high ? avail >> 1 : avail)
      if (take === 0) throw new NotCoveredError('a string splits inside a character')
      const end = this.at + (high ? take * 2 : take)
      text += b.toString(high ? 'utf16le' : 'latin1', this.at, end)
      this.at = end
      left -= take
    }
    this.skip(runs * 4 + ext)
    return text
  }
}

interface Globals {
  date1904: boolean
  /** Number format id by XF index. */
  xfFormat: number[]
  formats: Map<number, string>
  strings: string[]
  sheets: Array<{ name: string; at: number; type: number }>
}

/** The records from `at` on: type, start of data, length; the next record follows. */
function* records(s: Buffer, at: number): Generator<[number, number, number]> {
  while (at + 4 <= s.length) {
    const type = s.readUInt16LE(at)
    const len = s.readUInt16LE(at + 2)
    if (at + 4 + len > s.length) throw new NotCoveredError('a record runs past the end of the stream')
    yield [type, at + 4, len]
    at += 4 + len
  }
}

/**
 * An XLUnicodeString at `at` in a record ending at `end`: read in place when the record holds it
 * whole (nearly always), else across the CONTINUE records that follow.
 */
function plainString(s: Buffer, at: number, end: number): string {
  const cch = s.readUInt16LE(at)
  const high = s[at + 2] & 0x01
  const stop = at + 3 + (high ? cch * 2 : cch)
  if (stop <= end) return s.toString(high ? 'utf16le' : 'latin1', at + 3, stop)
  return new Continued(withContinues(s, at, end - at).parts).string(false)
}

/** A record with its CONTINUE records, as parts; `next` is where the next other record starts. */
function withContinues(s: Buffer, data: number, len: number): { parts: Buffer[]; next: number } {
  const parts = [s.subarray(data, data + len)]
  let at = data + len
  while (at + 4 <= s.length && s.readUInt16LE(at) === R.CONTINUE) {
    const l = s.readUInt16LE(at + 2)
    if (at + 4 + l > s.length) throw new NotCoveredError('a CONTINUE record runs past the end of the stream')
    parts.push(s.subarray(at + 4, at + 4 + l))
    at += 4 + l
  }
  return { parts, next: at }
}

function readGlobals(s: Buffer): Globals {
  const g: Globals = { date1904: false, xfFormat: [], formats: new Map(), strings: [], sheets: [] }
  const it = records(s, 0)
  const first = it.next()
  if (first.done || first.value[0] !== R.BOF || first.value[2] < 4)
    throw new NotCoveredError('the stream does not start with a BOF record')
  const [, bof] = first.value
  if (s.readUInt16LE(bof) !== BIFF8 || s.readUInt16LE(bof + 2) !== DT_GLOBALS)
    throw new NotCoveredError('not a BIFF8 workbook globals substream')
  for (const [type, data, len] of it) {
    switch (type) {
      case R.EOF:
        return g
      case R.FILEPASS:
        throw new EncryptedWorkbookError()
      case R.DATEMODE:
        g.date1904 = s.readUInt16LE(data) === 1
        break
      case R.XF:
        g.xfFormat.push(s.readUInt16LE(data + 2))
        break
      case R.FORMAT: {
        const { parts } = withContinues(s, data, len)
        const r = new Continued(parts)
        const id = r.u16()
        g.formats.set(id, r.string(false))
        break
      }
      case R.BOUNDSHEET: {
        const at = s.readUInt32LE(data)
        const sheetType = s[data + 5]
        const cch = s[data + 6]
        const high = s[data + 7] & 0x01
        if ((high ? cch * 2 : cch) + 8 > len) throw new NotCoveredError('a sheet name runs past its record')
        g.sheets.push({
          name: s.toString(high ? 'utf16le' : 'latin1', data + 8, data + 8 + (high ? cch * 2 : cch)),
          at,
          type: sheetType,
        })
        break
      }
      case R.SST: {
        const { parts } = withContinues(s, data, len)
        const r = new Continued(parts)
        r.u32() // total references
        const unique = r.u32()
        // Each string takes at least 3 bytes: a count past what the record holds is a lie.
        const bytes = parts.reduce((n, p) => n + p.length, 0)
        if (unique > bytes / 3) throw new NotCoveredError('the shared-string table counts more strings than it holds')
        for (let i = 0; i < unique; i++) g.strings.push(r.string(true))
        break
      }
    }
  }
  throw new NotCoveredError('the workbook globals have no EOF record')
}

/** An RK number (MS-XLS 2.5.217): a 30-bit integer or the top 30 bits of a double, perhaps × 100. */
const rkDouble = Buffer.alloc(8)
function rkNumber(s: Buffer, at: number): number {
  const rk = s.readInt32LE(at)
  let v: number
  if (rk & 0x02) v = rk >> 2
  else {
    rkDouble.writeInt32LE(rk & ~0x03, 4)
    v = rkDouble.readDoubleLE(0)
  }
  return rk & 0x01 ? v / 100 : v
}

function readSheet(s: Buffer, at: number, g: Globals, isDateXf: (xf: number) => boolean): Omit<SheetData, 'name'> {
  const rows: CellData[][] = []
  const merges: SheetData['merges'] = []
  const set = (r: number, c: number, cell: CellData) => {
    ;(rows[r] ??= [])[c] = cell
  }
  const number = (r: number, c: number, xf: number, v: number) => {
    if (isDateXf(xf)) {
      if (v >= 0 && v <= MAX_SERIAL) return set(r, c, { t: 'd', v: g.date1904 ? v + DAYS_1904 : v })
    }
    set(r, c, { t: 'n', v })
  }
  let depth = 0
  /** A FORMULA whose string result is in the STRING record that follows. */
  let pendingString: [number, number] | null = null
  for (let next = at; next + 4 <= s.length;) {
    const type = s.readUInt16LE(next)
    const len = s.readUInt16LE(next + 2)
    const data = next + 4
    next = data + len
    if (next > s.length) throw new NotCoveredError('a record runs past the end of the stream')
    if (type === R.BOF) {
      if (depth === 0 && (len < 4 || s.readUInt16LE(data) !== BIFF8 || s.readUInt16LE(data + 2) !== DT_WORKSHEET))
        throw new NotCoveredError('a sheet is not a BIFF8 worksheet')
      depth++
      continue
    }
    if (depth === 0) throw new NotCoveredError('a sheet does not start where the workbook says')
    if (type === R.EOF) {
      if (--depth === 0) return { rows, merges }
      continue
    }
    // An embedded chart's substream inside the sheet holds no cells of the sheet.
    if (depth !== 1) continue
    switch (type) {
      case R.NUMBER:
        number(s.readUInt16LE(data), s.readUInt16LE(data + 2), s.readUInt16LE(data + 4), s.readDoubleLE(data + 6))
        break
      case R.RK:
        number(s.readUInt16LE(data), s.readUInt16LE(data + 2), s.readUInt16LE(data + 4), rkNumber(s, data + 6))
        break
      case R.MULRK: {
        const r = s.readUInt16LE(data)
        const first = s.readUInt16LE(data + 2)
        const last = s.readUInt16LE(data + len - 2)
        if (last < first || (last - first + 1) * 6 + 6 !== len)
          throw new NotCoveredError('a MULRK record does not match its column range')
        for (let c = first, p = data + 4; c <= last; c++, p += 6) number(r, c, s.readUInt16LE(p), rkNumber(s, p + 2))
        break
      }
      case R.LABELSST: {
        const i = s.readUInt32LE(data + 6)
        if (i >= g.strings.length) throw new NotCoveredError('a cell names a shared string that does not exist')
        set(s.readUInt16LE(data), s.readUInt16LE(data + 2), { t: 's', v: g.strings[i] })
        break
      }
      case R.LABEL: {
        set(s.readUInt16LE(data), s.readUInt16LE(data + 2), { t: 's', v: plainString(s, data + 6, data + len) })
        break
      }
      case R.BOOLERR: {
        const v = s[data + 6]
        const isError = s[data + 7] === 1
        set(s.readUInt16LE(data), s.readUInt16LE(data + 2), isError ? { t: 'e', v } : { t: 'b', v: v === 1 })
        break
      }
      case R.FORMULA: {
        const r = s.readUInt16LE(data)
        const c = s.readUInt16LE(data + 2)
        pendingString = null
        if (s.readUInt16LE(data + 12) !== 0xffff) {
          number(r, c, s.readUInt16LE(data + 4), s.readDoubleLE(data + 6))
          break
        }
        const kind = s[data + 6]
        if (kind === 0) pendingString = [r, c]
        else if (kind === 1) set(r, c, { t: 'b', v: s[data + 8] === 1 })
        else if (kind === 2) set(r, c, { t: 'e', v: s[data + 8] })
        else if (kind === 3) set(r, c, { t: 's', v: '' })
        else throw new NotCoveredError('a formula result of unknown kind')
        break
      }
      case R.STRING: {
        if (!pendingString) throw new NotCoveredError('a STRING record follows no formula')
        set(pendingString[0], pendingString[1], { t: 's', v: plainString(s, data, data + len) })
        pendingString = null
        break
      }
      case R.MERGECELLS: {
        const n = s.readUInt16LE(data)
        if (2 + n * 8 > len) throw new NotCoveredError('a MERGECELLS record counts more ranges than it holds')
        for (let i = 0, p = data + 2; i < n; i++, p += 8)
          merges.push([s.readUInt16LE(p), s.readUInt16LE(p + 4), s.readUInt16LE(p + 2), s.readUInt16LE(p + 6)])
        break
      }
      default:
        if (OLDER_VALUE_RECORDS.has(type))
          throw new NotCoveredError(`a value record of an older format (0x${type.toString(16)})`)
    }
  }
  throw new NotCoveredError('a sheet has no EOF record')
}

/**
 * The sheets of a BIFF8 workbook with their cell values, in the order the workbook lists them;
 * dates (numbers in a date or time format) as serial days of the 1900 date system.
 */
export function readBiff8(file: Buffer): SheetData[] {
  let stream: Buffer | null
  try {
    stream = readCfbStream(file, 'Workbook')
  } catch (err) {
    if (err instanceof CfbError) throw new NotCoveredError(`the compound file: ${err.message}`)
    throw err
  }
  if (!stream) throw new NotCoveredError('no Workbook stream (BIFF5 and older name it Book)')
  try {
    const g = readGlobals(stream)
    const dateXf = g.xfFormat.map((id) => {
      const fmt = g.formats.get(id)
      return fmt === undefined ? BUILTIN_DATE_FORMATS.has(id) : id !== 0 && isDateFormat(fmt)
    })
    const isDateXf = (xf: number) => dateXf[xf] === true
    return g.sheets.map(({ name, at, type }) => {
      if (type !== SHEET_WORKSHEET) throw new NotCoveredError('a chart, macro or module sheet')
      return { name, ...readSheet(stream, at, g, isDateXf) }
    })
  } catch (err) {
    // A read past a record or the stream: the file is not laid out as this reader expects.
    if (err instanceof RangeError) throw new NotCoveredError(`a record is shorter than its layout (${err.message})`)
    throw err
  }
}
