import { type ZipEntry, zipArchive } from '../../platform/zip-writer.js'

/**
 * Writes an .xlsx (Office Open XML spreadsheet) from plain cell values: one worksheet part per
 * sheet, a minimal style sheet (one date format), nothing else. It replaces SheetJS's writer for
 * xls-to-xlsx, which built a second copy of the workbook as cell objects and deflated it in
 * JavaScript: 0.8 s of the runner's 1.8 s on the benchmark workbook (docs/benchmarks.md).
 * Sheet XML is produced a block of rows at a time and deflated by zlib as it goes.
 */
/**
 * A cell as SheetJS's dense mode holds it (its type and value; anything else is ignored), so the
 * parser worker hands its rows over as they are, without a copy: `t` is n(umber), s(tring),
 * b(oolean), d(ate: a Date, or a serial day of the 1900 date system), e(rror, `v` its BIFF code)
 * or z (stub, no value).
 */
export type CellData = { t: string; v?: unknown } | null | undefined

export interface SheetData {
  name: string
  merges: Array<[number, number, number, number]>
  rows: Array<CellData[] | null>
}

/** Excel's own limits (ECMA-376 and Excel's specifications). */
const MAX_ROWS = 1_048_576
const MAX_COLS = 16_384
const MAX_TEXT = 32_767
const ROWS_PER_BLOCK = 2_000

/** Excel's error values by their BIFF code. */
const ERRORS: Record<number, string> = {
  0x00: '#NULL!',
  0x07: '#DIV/0!',
  0x0f: '#VALUE!',
  0x17: '#REF!',
  0x1d: '#NAME?',
  0x24: '#NUM!',
  0x2a: '#N/A',
  0x2b: '#GETTING_DATA',
}

/** A workbook the format cannot hold as it is (the runner reports it as a rejected input). */
export class XlsxWriteError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'XlsxWriteError'
  }
}

const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const PKG_REL_NS = 'http://schemas.openxmlformats.org/package/2006/relationships'
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

/** XML text: markup characters escaped, control characters (not allowed in XML 1.0) as _xHHHH_. */
export function escapeXml(s: string): string {
  return s
    .replace(/[&<>"']/g, (c) => ESCAPES[c])
    .replace(
      /[\x00-\x08\x0b\x0c\x0e-\x1f]/g,
      (c) => `_x${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}_`,
    )
}

/** A column's letters: 0 → A, 25 → Z, 26 → AA. */
export function columnName(c: number): string {
  let s = ''
  for (let n = c + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s
  return s
}

const BASE_DATE = new Date(1899, 11, 30)

/** A date as Excel's serial day number (1900 system), read as local wall-clock time like SheetJS. */
export function excelSerial(d: Date): number {
  const threshold = BASE_DATE.getTime() + (d.getTimezoneOffset() - BASE_DATE.getTimezoneOffset()) * 60_000
  return (d.getTime() - threshold) / 86_400_000
}

/** Sheet names as Excel allows them: 1–31 characters, none of : \ / ? * [ ], unique ignoring case. */
export function checkSheetNames(names: string[]): void {
  const seen = new Set<string>()
  for (const name of names) {
    if (name.length === 0 || name.length > 31)
      throw new XlsxWriteError(`the sheet name ${JSON.stringify(name.slice(0, 40))} is not 1 to 31 characters long`)
    if (/[:\\/?*[\]]/.test(name))
      throw new XlsxWriteError(`the sheet name ${JSON.stringify(name)} contains one of : \\ / ? * [ ]`)
    const key = name.toLowerCase()
    if (seen.has(key)) throw new XlsxWriteError(`two sheets are named ${JSON.stringify(name)}`)
    seen.add(key)
  }
}

/** One cell's XML, or '' for a value with nothing to write. */
function cellXml(ref: string, cell: CellData): string {
  if (!cell || cell.v === undefined || cell.v === null) return ''
  const { t, v } = cell
  switch (t) {
    case 'n':
      if (typeof v !== 'number') return ''
      return Number.isFinite(v) ? `<c r="${ref}"><v>${v}</v></c>` : `<c r="${ref}" t="e"><v>#NUM!</v></c>`
    case 'b':
      return `<c r="${ref}" t="b"><v>${v ? 1 : 0}</v></c>`
    case 'e':
      return `<c r="${ref}" t="e"><v>${ERRORS[v as number] ?? '#N/A'}</v></c>`
    case 'd': {
      // A serial day (our BIFF8 reader keeps the workbook's own number), or a Date (SheetJS).
      if (typeof v === 'number') return Number.isFinite(v) ? `<c r="${ref}" s="1"><v>${v}</v></c>` : ''
      const d = v instanceof Date ? v : new Date(String(v))
      return Number.isNaN(d.getTime()) ? '' : `<c r="${ref}" s="1"><v>${excelSerial(d)}</v></c>`
    }
    case 's': {
      const text = String(v)
      if (text.length > MAX_TEXT) throw new XlsxWriteError(`the cell ${ref} holds more than ${MAX_TEXT} characters`)
      const space = /^\s|\s$/.test(text) ? ' xml:space="preserve"' : ''
      return `<c r="${ref}" t="inlineStr"><is><t${space}>${escapeXml(text)}</t></is></c>`
    }
    default:
      return ''
  }
}

/** The used range of a sheet's cells ('A1' when it has none). */
function dimension(rows: SheetData['rows']): string {
  let maxR = -1
  let maxC = -1
  rows.forEach((row, r) => {
    if (!row) return
    for (let c = row.length - 1; c >= 0; c--) {
      if (row[c]) {
        maxR = r
        if (c > maxC) maxC = c
        break
      }
    }
  })
  return maxR < 0 ? 'A1' : `A1:${columnName(maxC)}${maxR + 1}`
}

async function* worksheet(sheet: SheetData): AsyncGenerator<Buffer> {
  if (sheet.rows.length > MAX_ROWS)
    throw new XlsxWriteError(`the sheet ${JSON.stringify(sheet.name)} has more than ${MAX_ROWS} rows`)
  const columns: string[] = []
  yield Buffer.from(`${XML_HEAD}<worksheet xmlns="${NS}"><dimension ref="${dimension(sheet.rows)}"/><sheetData>`)
  let block: string[] = []
  for (let r = 0; r < sheet.rows.length; r++) {
    const row = sheet.rows[r]
    if (!row || row.length === 0) continue
    if (row.length > MAX_COLS)
      throw new XlsxWriteError(`the sheet ${JSON.stringify(sheet.name)} has more than ${MAX_COLS} columns`)
    let cells = ''
    for (let c = 0; c < row.length; c++) {
      if (!row[c]) continue
      columns[c] ??= columnName(c)
      cells += cellXml(`${columns[c]}${r + 1}`, row[c])
    }
    if (cells) block.push(`<row r="${r + 1}">${cells}</row>`)
    if (block.length >= ROWS_PER_BLOCK) {
      yield Buffer.from(block.join(''))
      block = []
    }
  }
  const merges = sheet.merges.filter(
    ([sr, sc, er, ec]) =>
      [sr, sc, er, ec].every((n) => Number.isInteger(n) && n >= 0) &&
      er < MAX_ROWS &&
      ec < MAX_COLS &&
      er >= sr &&
      ec >= sc,
  )
  const mergeXml = merges.length
    ? `<mergeCells count="${merges.length}">${merges.map(([sr, sc, er, ec]) => `<mergeCell ref="${columnName(sc)}${sr + 1}:${columnName(ec)}${er + 1}"/>`).join('')}</mergeCells>`
    : ''
  yield Buffer.from(`${block.join('')}</sheetData>${mergeXml}</worksheet>`)
}

const STYLES = `${XML_HEAD}<styleSheet xmlns="${NS}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`

async function* once(text: string): AsyncGenerator<Buffer> {
  yield Buffer.from(text)
}

/** The package's parts, in the order Excel writes them. */
function* parts(sheets: SheetData[]): Generator<ZipEntry> {
  const date = new Date(1980, 0, 1)
  const part = (name: string, data: AsyncIterable<Uint8Array>): ZipEntry => ({ name, date, store: false, data })
  const n = sheets.length
  yield part(
    '[Content_Types].xml',
    once(
      `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
        sheets
          .map(
            (_, i) =>
              `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
          )
          .join('') +
        `<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`,
    ),
  )
  yield part(
    '_rels/.rels',
    once(
      `${XML_HEAD}<Relationships xmlns="${PKG_REL_NS}"><Relationship Id="rId1" Type="${REL_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ),
  )
  yield part(
    'xl/workbook.xml',
    once(
      `${XML_HEAD}<workbook xmlns="${NS}" xmlns:r="${REL_NS}"><sheets>${sheets.map((s, i) => `<sheet name="${escapeXml(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
    ),
  )
  yield part(
    'xl/_rels/workbook.xml.rels',
    once(
      `${XML_HEAD}<Relationships xmlns="${PKG_REL_NS}">${sheets.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${REL_NS}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join('')}<Relationship Id="rId${n + 1}" Type="${REL_NS}/styles" Target="styles.xml"/></Relationships>`,
    ),
  )
  yield part('xl/styles.xml', once(STYLES))
  for (const [i, s] of sheets.entries()) yield part(`xl/worksheets/sheet${i + 1}.xml`, worksheet(s))
}

/** The .xlsx of `sheets`, values only, every sheet in order. */
export async function writeXlsx(sheets: SheetData[], level = 6): Promise<Buffer> {
  if (sheets.length === 0) throw new XlsxWriteError('the workbook has no sheets')
  // BIFF allows 31 characters too; a longer name (a crafted file) is cut like Excel would.
  const named = sheets.map((s) => ({ ...s, name: s.name.slice(0, 31) }))
  checkSheetNames(named.map((s) => s.name))
  const out: Buffer[] = []
  for await (const chunk of zipArchive(parts(named), { level })) out.push(Buffer.from(chunk))
  return Buffer.concat(out)
}
