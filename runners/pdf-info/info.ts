import { textOf } from '../common/pdf-facts.js'

/** pdf-info's reading of qpdf's description: pure functions (runners/common/pdf-facts.ts has the rest). */

/** The PDF version its header declares, as qpdf's JSON reports it ("1.7"). */
export function pdfVersionOf(report: unknown): string | undefined {
  const v = (report as { qpdf?: [{ pdfversion?: unknown }] }).qpdf?.[0]?.pdfversion
  return typeof v === 'string' && /^\d\.\d{1,2}$/.test(v) ? v : undefined
}

/**
 * Whether the PDF is linearized ("fast web view"): its first object, within its first kilobyte,
 * is a linearization dictionary (how readers tell; qpdf rewrites a damaged one on its own).
 */
export function isLinearized(head: Buffer): boolean {
  return /\/Linearized\s*[\d.]+/.test(head.subarray(0, 1024).toString('latin1'))
}

const PDF_DATE = /^D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz])|([+-])(\d{2})'?(\d{2})?'?)?/

/**
 * A PDF date ("D:20240105093000+01'00'", parts after the year optional) as ISO 8601
 * ("2024-01-05T09:30:00+01:00"; without an offset when the PDF gives none, as its time is then
 * the author's local time), or undefined when it is not a date.
 */
export function isoDateOf(value: string): string | undefined {
  const m = PDF_DATE.exec(value.trim())
  if (!m) return undefined
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', z, sign, oh, om = '00'] = m
  const n = (x: string) => Number(x)
  if (n(mo) < 1 || n(mo) > 12 || n(d) < 1 || n(d) > 31 || n(h) > 23 || n(mi) > 59 || n(s) > 59) return undefined
  const offset = z ? 'Z' : sign ? (n(oh) > 14 || n(om) > 59 ? undefined : `${sign}${oh}:${om}`) : ''
  if (offset === undefined) return undefined
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`
}

/** The creation and modification dates of an Info dictionary (as qpdf's JSON writes it), when they are dates. */
export function dateExtras(dict: Record<string, unknown> | undefined): { created?: string; modified?: string } {
  const out: { created?: string; modified?: string } = {}
  const created = textOf(dict?.['/CreationDate'])
  const modified = textOf(dict?.['/ModDate'])
  const c = created && isoDateOf(created)
  const m = modified && isoDateOf(modified)
  if (c) out.created = c
  if (m) out.modified = m
  return out
}

/** A bookmark as pdf-info stores it (Gotenberg's shape): its title, the page it opens (from 1) and those under it. */
export interface Bookmark {
  title: string
  /** The page it opens, from 1; null when it opens no page of the document (a link, an action). */
  page: number | null
  children?: Bookmark[]
}

/**
 * The outline (bookmarks) from qpdf's `--json-key=outlines` description, in order, and how many
 * there are on all levels: at most `max` (more fails, naming the limit, rather than answering part
 * of it as the whole).
 */
export function bookmarksOf(report: unknown, max: number): { bookmarks: Bookmark[]; count: number } {
  let count = 0
  const walk = (items: unknown): Bookmark[] => {
    if (!Array.isArray(items)) return []
    return items.map((item) => {
      if (++count > max) throw new TooManyBookmarks(max)
      const o = (item ?? {}) as { title?: unknown; destpageposfrom1?: unknown; kids?: unknown }
      const page =
        typeof o.destpageposfrom1 === 'number' && Number.isSafeInteger(o.destpageposfrom1) ? o.destpageposfrom1 : null
      const children = walk(o.kids)
      return {
        title: typeof o.title === 'string' ? o.title.slice(0, 1000) : '',
        page,
        ...(children.length ? { children } : {}),
      }
    })
  }
  const bookmarks = walk((report as { outlines?: unknown }).outlines)
  return { bookmarks, count }
}

/** The outline has more bookmarks than pdf-info reads. */
export class TooManyBookmarks extends Error {
  constructor(readonly max: number) {
    super(`more than ${max} bookmarks`)
  }
}
