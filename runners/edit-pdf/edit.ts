import type { DocumentInfo } from '../common/document-info-schema.js'
import { INFO_KEYS, infoRefOf, type PdfFacts } from '../common/pdf-facts.js'
import { selectedPages } from '../common/page-ranges.js'
import { outlineObjects, type BookmarkToWrite } from './outline.js'
import type { StampOptions } from './stamp.js'
import type { RewriteOptions } from './ghostscript.js'
import { xmpDate, xmpPacket, type PdfaLevel } from '../common/xmp.js'

export interface EditPdfInput extends RewriteOptions {
  url: string
  flatten?: boolean
  rotate?: { angle: 90 | 180 | 270; pages?: string }
  stamp?: StampOptions & { layer?: 'over' | 'under'; pages?: string }
  info?: DocumentInfo
  compress?: boolean
  linearize?: boolean
  encrypt?: EncryptOptions
  /** The outline the edited PDF gets in place of its own. */
  bookmarks?: BookmarkToWrite[]
  /** Files embedded in the PDF. */
  attachments?: Array<{ url: string; name?: string; description?: string; mimeType?: string }>
  /** Opens a protected input (its owner password). */
  password?: string
  /** Makes a tagged PDF accessible (PDF/UA-1). */
  pdfua?: boolean
}

export interface EncryptOptions {
  userPassword?: string
  ownerPassword?: string
  print?: 'full' | 'low' | 'none'
  modify?: 'all' | 'annotate' | 'form' | 'assembly' | 'none'
  copy?: boolean
}

/**
 * qpdf's arguments that encrypt the output (pure): AES-256, the owner password the user
 * password when none is given. They hold the passwords, so they are written to a file qpdf
 * reads them from (`@file`, one argument a line), never put on its command line.
 */
export function encryptArgs(e: EncryptOptions): string[] {
  const user = e.userPassword ?? ''
  const owner = e.ownerPassword || user
  return [
    '--encrypt',
    user,
    owner,
    '256',
    `--print=${e.print ?? 'full'}`,
    `--modify=${e.modify ?? 'all'}`,
    `--extract=${e.copy === false ? 'n' : 'y'}`,
    '--',
  ]
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
  return { qpdf: [updateHeader(facts.maxObjectId), objects] }
}

/** The header of a qpdf JSON update of a document whose highest object number is `maxObjectId`. */
function updateHeader(maxObjectId: number): Record<string, unknown> {
  return { jsonversion: 2, pushedinheritedpageresources: false, calledgetallpages: false, maxobjectid: maxObjectId }
}

/** What a document's outline is written from: its catalog (the trailer's /Root) and its pages' objects. */
export interface OutlineEdit {
  root: { ref: string; value: Record<string, unknown> }
  pageRefs: readonly string[]
  bookmarks: readonly BookmarkToWrite[]
}

/**
 * qpdf's update document for the edits it writes as objects (pure): the document information
 * (infoUpdate) and the outline, which replaces the document's own (an empty one removes it; the
 * old items, no longer referenced, are not written). New objects are numbered after the highest.
 */
export function documentUpdate(
  facts: Pick<PdfFacts, 'trailer' | 'maxObjectId'>,
  edits: {
    info?: { current: Record<string, unknown> | undefined; info: DocumentInfo; now: Date }
    outline?: OutlineEdit
  },
): object {
  const base = edits.info
    ? (infoUpdate(facts, edits.info.current, edits.info.info, edits.info.now) as {
        qpdf: [Record<string, unknown>, Record<string, unknown>]
      })
    : { qpdf: [updateHeader(facts.maxObjectId), {}] as [Record<string, unknown>, Record<string, unknown>] }
  const objects = base.qpdf[1]
  if (edits.outline) {
    const { root, pageRefs, bookmarks } = edits.outline
    // After the Info dictionary infoUpdate may have made.
    const taken = Object.keys(objects)
      .map((k) => /^obj:(\d+) 0 R$/.exec(k)?.[1])
      .filter((id): id is string => id !== undefined)
      .map(Number)
    const firstId = Math.max(facts.maxObjectId, ...taken) + 1
    const catalog: Record<string, unknown> = { ...root.value }
    if (bookmarks.length) {
      const outline = outlineObjects(bookmarks, pageRefs, firstId)
      Object.assign(objects, outline.objects)
      catalog['/Outlines'] = outline.outlines
    } else delete catalog['/Outlines']
    objects[`obj:${root.ref}`] = { value: catalog }
  }
  return base
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
  /** The file holding the input's password, when it has one. */
  passwordFile?: string
  /** The file holding the encryption's arguments (encryptArgs), when the output is protected. */
  encryptArgs?: string
  /** Embedded files to remove (their keys in the document's name tree): PDF/A as dutil writes it carries none. */
  removeAttachments?: string[]
  /** The files to embed, downloaded to scratch, with the names and descriptions they get. */
  attachments?: Array<{ path: string; name: string; description?: string; mimeType?: string }>
}

/**
 * Which of a document's edits a qpdf run makes: `whole`, every edit in one run (no Ghostscript
 * rewrite); around a rewrite, `before` it the edits of the pages and their structure (flatten,
 * rotate, stamp, bookmarks, attachments, the protection lifted) and `after` it those of the file
 * (the document information, compression, linearization, protection).
 */
export type QpdfStage = 'whole' | 'before' | 'after'

/**
 * qpdf's arguments for one edit (pure): every edit asked for of its stage, in one run of qpdf,
 * which reads the document once and writes it once. Page ranges are checked against the document
 * (a page past its end is the input's fault) and written as qpdf's own.
 */
export function qpdfArgs(
  input: EditPdfInput,
  pageCount: number,
  files: EditFiles,
  stage: QpdfStage = 'whole',
): string[] {
  const pagesOf = (ranges: string | undefined) =>
    ranges === undefined ? `1-${pageCount}` : qpdfRanges(selectedPages(ranges, pageCount))
  const pages = stage !== 'after'
  const file = stage !== 'before'
  // Damage qpdf can repair is repaired, with a warning that is no failure.
  const args = ['--warning-exit-0']
  if (files.passwordFile && pages) args.push(`--password-file=${files.passwordFile}`)
  args.push(files.input)
  if (files.infoUpdate) args.push(`--update-from-json=${files.infoUpdate}`)
  if (pages) {
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
    for (const key of files.removeAttachments ?? []) args.push(`--remove-attachment=${key}`)
    // Files embedded (an existing one of the same name replaced), named as given.
    for (const a of files.attachments ?? [])
      args.push(
        '--add-attachment',
        a.path,
        `--key=${a.name}`,
        `--filename=${a.name}`,
        ...(a.description ? [`--description=${a.description}`] : []),
        ...(a.mimeType ? [`--mimetype=${a.mimeType}`] : []),
        '--replace',
        '--',
      )
  }
  if (file) {
    // PDF/A asks for a line end before every endstream keyword, which qpdf writes only when told.
    if (input.pdfa) args.push('--newline-before-endstream')
    if (input.compress)
      args.push(
        // PDF/A-1 is PDF 1.4: no object streams.
        `--object-streams=${input.pdfa === 'PDF/A-1b' ? 'disable' : 'generate'}`,
        '--compress-streams=y',
        '--recompress-flate',
        '--compression-level=9',
      )
    if (input.linearize) args.push('--linearize')
  }
  // A protected input's protection goes, unless the output is protected anew.
  if (files.encryptArgs && file) args.push(`@${files.encryptArgs}`)
  else if (files.passwordFile && pages) args.push('--decrypt')
  args.push(files.output)
  return args
}

/**
 * qpdf's update document that writes a rewritten document's information (pure): `info` whole in
 * its Info dictionary (a new one when it has none), the creation date kept, the modification date
 * now; and for a PDF/A document the same in its XMP metadata (`xmpFile`, written from xmpPacket),
 * in place of Ghostscript's, which the standard asks to agree with the Info dictionary.
 */
export function rewrittenInfoUpdate(
  facts: Pick<PdfFacts, 'trailer' | 'maxObjectId'>,
  o: {
    info: DocumentInfo
    /** The original document's creation date (a PDF date), when it has one. */
    created: string | undefined
    now: Date
    pdfa?: { level: PdfaLevel; catalog: { ref: string; value: Record<string, unknown> }; xmpFile: string }
  },
): { update: object; xmp?: string } {
  const modified = pdfDate(o.now)
  const created = o.created !== undefined && xmpDate(o.created) ? o.created : modified
  // The Info dictionary whole: nothing of Ghostscript's kept but the creation date given back.
  const update = infoUpdate(facts, { '/CreationDate': `u:${created}` }, o.info, o.now) as {
    qpdf: [object, Record<string, unknown>]
  }
  if (!o.pdfa) return { update }
  const objects = update.qpdf[1]
  const xmp = xmpPacket({ pdfa: o.pdfa.level, info: o.info, created: xmpDate(created)!, modified: xmpDate(modified)! })
  const current = o.pdfa.catalog.value['/Metadata']
  // A new stream is numbered after the Info dictionary infoUpdate may have made.
  const next = facts.maxObjectId + (infoRefOf(facts.trailer) ? 1 : 2)
  const metadataRef = typeof current === 'string' && /^\d+ \d+ R$/.test(current) ? current : `${next} 0 R`
  objects[`obj:${metadataRef}`] = {
    stream: { dict: { '/Type': '/Metadata', '/Subtype': '/XML' }, datafile: o.pdfa.xmpFile },
  }
  if (metadataRef !== current)
    objects[`obj:${o.pdfa.catalog.ref}`] = { value: { ...o.pdfa.catalog.value, '/Metadata': metadataRef } }
  return { update, xmp }
}
