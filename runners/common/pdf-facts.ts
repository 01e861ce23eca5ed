import { rejected } from './runner-error.js'
import type { DocumentInfo } from './document-info-schema.js'

/**
 * What qpdf's JSON description (version 2) says of a PDF, read by the utilities that run qpdf
 * (edit-pdf, pdf-info). Pure functions of the description.
 */

/** What qpdf's JSON (version 2) says of a document: the part an edit needs. */
export interface PdfFacts {
  pageCount: number
  encrypted: boolean
  /** Encrypted, and the password qpdf opened it with (none: the empty one) lifts its permissions. */
  ownerPasswordMatched: boolean
  /** The trailer dictionary, as qpdf's JSON writes it. */
  trailer: Record<string, unknown>
  maxObjectId: number
}

/**
 * The facts from `qpdf --json=2 --json-key=encrypt --json-key=qpdf --json-object=trailer` and the
 * page count qpdf's `--show-npages` printed (a third of the time qpdf takes to list the pages in JSON).
 */
export function pdfFactsOf(report: unknown, npages: string): PdfFacts {
  const r = report as {
    encrypt?: { encrypted?: boolean; ownerpasswordmatched?: boolean }
    qpdf?: [{ maxobjectid?: number }, { trailer?: { value?: Record<string, unknown> } }]
  }
  const trailer = r.qpdf?.[1]?.trailer?.value
  const pageCount = Number(npages.trim())
  if (!/^\d+$/.test(npages.trim()) || !trailer || typeof r.qpdf?.[0]?.maxobjectid !== 'number')
    // The document's fault, not the runner's: a crash would be tried again for nothing.
    throw rejected('qpdf described the PDF without its page count or trailer: it is not a PDF dutil can read.')
  return {
    pageCount,
    encrypted: r.encrypt?.encrypted === true,
    ownerPasswordMatched: r.encrypt?.encrypted === true && r.encrypt.ownerpasswordmatched === true,
    trailer,
    maxObjectId: r.qpdf[0].maxobjectid,
  }
}

/** The indirect object a trailer's `key` names ("12 0 R"), if any. */
function trailerRefOf(trailer: Record<string, unknown>, key: '/Info' | '/Root'): string | undefined {
  const ref = trailer[key]
  return typeof ref === 'string' && /^\d+ \d+ R$/.test(ref) ? ref : undefined
}

/** The Info dictionary a trailer names, if any. */
export const infoRefOf = (trailer: Record<string, unknown>) => trailerRefOf(trailer, '/Info')

/** The document catalog a trailer's /Root names, if any. */
export const rootRefOf = (trailer: Record<string, unknown>) => trailerRefOf(trailer, '/Root')

/** The value of one object from `qpdf --json=2 --json-key=qpdf --json-object=<ref>`. */
export function objectValueOf(report: unknown, ref: string): Record<string, unknown> | undefined {
  const objects = (report as { qpdf?: [unknown, Record<string, { value?: unknown }>] }).qpdf?.[1]
  const value = objects?.[`obj:${ref}`]?.value
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
}

/** The Info dictionary's keys of the document information fields. */
export const INFO_KEYS = {
  title: '/Title',
  author: '/Author',
  subject: '/Subject',
  keywords: '/Keywords',
  creator: '/Creator',
  producer: '/Producer',
} as const

/** A text string of qpdf's JSON ("u:…"); binary strings ("b:…") and anything else are not text. */
export function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.startsWith('u:') ? value.slice(2) : undefined
}

/** The document information a PDF reader shows, from an Info dictionary as qpdf's JSON writes it. */
export function documentInfoOf(dict: Record<string, unknown> | undefined): DocumentInfo {
  const info: DocumentInfo = {}
  if (!dict) return info
  for (const [field, key] of Object.entries(INFO_KEYS) as Array<[keyof DocumentInfo, string]>) {
    const text = textOf(dict[key])
    if (text === undefined || text === '') continue
    if (field === 'keywords')
      info.keywords = text
        .split(/[,;]/)
        .map((k) => k.trim())
        .filter(Boolean)
    else info[field] = text
  }
  return info
}

/** The longest text a result's field carries (operator/result-check.ts). */
const MAX_EXTRA_CHARS = 1000

/** Document information as the job's result carries it: a text each, keywords joined by commas. */
export function infoExtras(info: DocumentInfo): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [field, value] of Object.entries(info) as Array<[keyof DocumentInfo, string | string[]]>) {
    const text = Array.isArray(value) ? value.join(', ') : value
    if (text) out[field] = text.slice(0, MAX_EXTRA_CHARS)
  }
  return out
}
