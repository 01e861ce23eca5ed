import type { DocumentInfo } from '../common/document-info-schema.js'
import { selectedPages } from '../common/page-ranges.js'
import type { StampOptions } from './stamp.js'

export interface EditPdfInput {
  url: string
  flatten?: boolean
  rotate?: { angle: 90 | 180 | 270; pages?: string }
  stamp?: StampOptions & { layer?: 'over' | 'under'; pages?: string }
  info?: DocumentInfo
  compress?: boolean
  linearize?: boolean
}

/** What qpdf's JSON (version 2) says of a document: the part an edit needs. */
export interface PdfFacts {
  pageCount: number
  encrypted: boolean
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
    encrypt?: { encrypted?: boolean }
    qpdf?: [{ maxobjectid?: number }, { trailer?: { value?: Record<string, unknown> } }]
  }
  const trailer = r.qpdf?.[1]?.trailer?.value
  const pageCount = Number(npages.trim())
  if (!/^\d+$/.test(npages.trim()) || !trailer || typeof r.qpdf?.[0]?.maxobjectid !== 'number')
    throw new Error('qpdf described the document without its page count or trailer')
  return {
    pageCount,
    encrypted: r.encrypt?.encrypted === true,
    trailer,
    maxObjectId: r.qpdf[0].maxobjectid,
  }
}

/** The indirect object a trailer's /Info names ("12 0 R"), if any. */
export function infoRefOf(trailer: Record<string, unknown>): string | undefined {
  const ref = trailer['/Info']
  return typeof ref === 'string' && /^\d+ \d+ R$/.test(ref) ? ref : undefined
}

/** The value of one object from `qpdf --json=2 --json-key=qpdf --json-object=<ref>`. */
export function objectValueOf(report: unknown, ref: string): Record<string, unknown> | undefined {
  const objects = (report as { qpdf?: [unknown, Record<string, { value?: unknown }>] }).qpdf?.[1]
  const value = objects?.[`obj:${ref}`]?.value
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
}

const INFO_KEYS = {
  title: '/Title',
  author: '/Author',
  subject: '/Subject',
  keywords: '/Keywords',
  creator: '/Creator',
  producer: '/Producer',
} as const

/** A text string of qpdf's JSON ("u:…"); binary strings ("b:…") and anything else are not text. */
function textOf(value: unknown): string | undefined {
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

/** A PDF date ("D:20261129101500Z"). */
export function pdfDate(at: Date): string {
  return `D:${at.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`
}

/**
 * qpdf's update document (`--update-from-json`) that writes `info` into the document: the fields
 * given replace the Info dictionary's own, the rest of it stays, and its modification date is
 * now. A document without an Info dictionary gets a new one, named by its trailer (whose other
 * keys are kept as they are: qpdf writes its own cross-reference data from them).
 */
export function infoUpdate(
  facts: Pick<PdfFacts, 'trailer' | 'maxObjectId'>,
  current: Record<string, unknown> | undefined,
  info: DocumentInfo,
  now: Date,
): object {
  const value: Record<string, unknown> = { ...(current ?? {}) }
  for (const [field, key] of Object.entries(INFO_KEYS) as Array<[keyof DocumentInfo, string]>) {
    const given = info[field]
    if (given === undefined) continue
    value[key] = `u:${Array.isArray(given) ? given.join(', ') : given}`
  }
  value['/ModDate'] = `u:${pdfDate(now)}`
  const existing = infoRefOf(facts.trailer)
  const ref = existing ?? `${facts.maxObjectId + 1} 0 R`
  const objects: Record<string, unknown> = { [`obj:${ref}`]: { value } }
  if (!existing) objects.trailer = { value: { ...facts.trailer, '/Info': ref } }
  return {
    qpdf: [
      { jsonversion: 2, pushedinheritedpageresources: false, calledgetallpages: false, maxobjectid: facts.maxObjectId },
      objects,
    ],
  }
}

/** Pages as qpdf's page ranges take them: ascending runs ("1-3,5"). */
export function qpdfRanges(pages: number[]): string {
  const sorted = [...new Set(pages)].sort((a, b) => a - b)
  const runs: string[] = []
  for (let i = 0; i < sorted.length;) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++
    runs.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`)
    i = j + 1
  }
  return runs.join(',')
}

export interface EditFiles {
  input: string
  output: string
  /** The stamp's one-page PDF, when the edit stamps. */
  stamp?: string
  /** The update document that writes the document information, when the edit writes it. */
  infoUpdate?: string
}

/**
 * qpdf's arguments for one edit (pure): every edit asked for, in one run of qpdf, which reads the
 * document once and writes it once. Page ranges are checked against the document (a page past
 * its end is the input's fault) and written as qpdf's own.
 */
export function qpdfArgs(input: EditPdfInput, pageCount: number, files: EditFiles): string[] {
  const pagesOf = (ranges: string | undefined) =>
    ranges === undefined ? `1-${pageCount}` : qpdfRanges(selectedPages(ranges, pageCount))
  // Damage qpdf can repair is repaired, with a warning that is no failure.
  const args = ['--warning-exit-0', files.input]
  if (files.infoUpdate) args.push(`--update-from-json=${files.infoUpdate}`)
  if (input.flatten) args.push('--generate-appearances', '--flatten-annotations=all')
  if (input.rotate) args.push(`--rotate=+${input.rotate.angle}:${pagesOf(input.rotate.pages)}`)
  if (input.stamp && files.stamp)
    args.push(
      input.stamp.layer === 'under' ? '--underlay' : '--overlay',
      files.stamp,
      `--to=${pagesOf(input.stamp.pages)}`,
      '--from=1',
      '--repeat=1',
      '--',
    )
  if (input.compress)
    args.push('--object-streams=generate', '--compress-streams=y', '--recompress-flate', '--compression-level=9')
  if (input.linearize) args.push('--linearize')
  args.push(files.output)
  return args
}
