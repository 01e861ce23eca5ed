import type { PaperFormat, PDFOptions } from 'puppeteer-core'
import { outputFileName } from '../common/file-names.js'
import { rejected } from '../common/runner-error.js'

/** The longest a page's wait (input.wait) may take, all its parts together. */
export const MAX_WAIT_MS = 30_000

/** `pdfOptions` as the input schema accepts them (see utility.ts). */
export interface PdfOptionsInput {
  format?: string
  width?: string
  height?: string
  orientation?: 'portrait' | 'landscape'
  landscape?: boolean
  scale?: number
  preferCSSPageSize?: boolean
  printBackground?: boolean
  margin?: { top?: string; right?: string; bottom?: string; left?: string }
  pageRanges?: string
  headerTemplate?: string
  footerTemplate?: string
  tagged?: boolean
  outline?: boolean
  pdfa?: 'PDF/A-2b' | 'PDF/A-3b'
  pdfua?: boolean
  singlePage?: boolean
  omitBackground?: boolean
}

/** What a header or footer shows when only the other is given (Chromium's own would print the date and title). */
const EMPTY_TEMPLATE = '<span></span>'

/**
 * Maps the API's pdfOptions onto Chromium's print options (Page.printToPDF through puppeteer).
 * Absent keys keep Chromium's defaults: Letter, portrait, scale 1, no backgrounds, no margins,
 * every page, no header or footer.
 */
export function printOptions(o: PdfOptionsInput = {}): PDFOptions {
  const out: PDFOptions = {}
  if (o.format) out.format = o.format as PaperFormat
  if (o.width && o.height) {
    out.width = o.width
    out.height = o.height
  }
  const landscape = o.landscape ?? (o.orientation === undefined ? undefined : o.orientation === 'landscape')
  if (landscape !== undefined) out.landscape = landscape
  if (o.scale !== undefined) out.scale = o.scale
  if (o.preferCSSPageSize !== undefined) out.preferCSSPageSize = o.preferCSSPageSize
  if (o.printBackground !== undefined) out.printBackground = o.printBackground
  if (o.margin) {
    out.margin = {}
    for (const side of ['top', 'right', 'bottom', 'left'] as const)
      if (o.margin[side] !== undefined) out.margin[side] = o.margin[side]
  }
  if (o.pageRanges !== undefined) out.pageRanges = o.pageRanges
  if (o.headerTemplate !== undefined || o.footerTemplate !== undefined) {
    out.displayHeaderFooter = true
    out.headerTemplate = o.headerTemplate ?? EMPTY_TEMPLATE
    out.footerTemplate = o.footerTemplate ?? EMPTY_TEMPLATE
  }
  if (o.omitBackground !== undefined) out.omitBackground = o.omitBackground
  if (o.tagged !== undefined) out.tagged = o.tagged
  // Chromium builds the outline from the tagged structure: an outline asks for a tagged PDF.
  if (o.outline) {
    out.outline = true
    out.tagged = true
  }
  // An accessible PDF is a tagged one.
  if (o.pdfua) out.tagged = true
  return out
}

/** CSS pixels per unit, as Chromium's printer counts them (96 to the inch). */
const PX_PER: Record<string, number> = { px: 1, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 }

/** A CssLength in CSS pixels. */
export function cssPx(length: string): number {
  const m = /^([0-9.]+)(px|in|cm|mm)?$/.exec(length)
  return m ? Number(m[1]) * PX_PER[m[2] ?? 'px'] : 0
}

/** Paper sizes in inches (width × height, portrait), as Chromium's printer has them. */
const PAPER_INCHES: Record<string, [number, number]> = {
  Letter: [8.5, 11],
  Legal: [8.5, 14],
  Tabloid: [11, 17],
  Ledger: [17, 11],
  A0: [33.1, 46.8],
  A1: [23.4, 33.1],
  A2: [16.54, 23.4],
  A3: [11.7, 16.54],
  A4: [8.27, 11.7],
  A5: [5.83, 8.27],
  A6: [4.13, 5.83],
}

/** The tallest single page: 200 inches, the largest page side PDF readers draw. */
export const MAX_SINGLE_PAGE_PX = 200 * 96

/**
 * singlePage: the width (CSS px) at which the page is laid out to be measured (the paper's width
 * less the side margins, over the scale), and the print options of one page as tall as the
 * content measured there (`contentPx`), margins added, on the paper's width; a page taller than
 * MAX_SINGLE_PAGE_PX is refused.
 */
export function singlePageLayout(o: PdfOptionsInput = {}): {
  layoutWidthPx: number
  optionsFor(contentPx: number): PDFOptions
} {
  const landscape = o.landscape ?? o.orientation === 'landscape'
  const [w, h] =
    o.width && o.height ? [cssPx(o.width), cssPx(o.height)] : PAPER_INCHES[o.format ?? 'Letter'].map((i) => i * 96)
  // Chromium turns a landscape page's paper sideways: its width is the paper's height.
  const paperWidth = landscape ? h : w
  const margin = (side: 'top' | 'right' | 'bottom' | 'left') => cssPx(o.margin?.[side] ?? '0')
  const scale = o.scale ?? 1
  return {
    layoutWidthPx: Math.max(1, Math.floor((paperWidth - margin('left') - margin('right')) / scale)),
    optionsFor(contentPx) {
      const { format: _f, landscape: _l, pageRanges: _p, preferCSSPageSize: _c, ...rest } = printOptions(o)
      // One pixel more than measured: rounding never spills a last line onto a second page.
      const height = Math.ceil(contentPx * scale + margin('top') + margin('bottom')) + 1
      if (height > MAX_SINGLE_PAGE_PX)
        throw rejected(
          `The page is too tall for one page: ${Math.round(height / 96)} in, at most ${MAX_SINGLE_PAGE_PX / 96} in.`,
        )
      return { ...rest, width: `${Math.round(paperWidth)}px`, height: `${height}px` }
    },
  }
}

/** The output's file name: the input's base name with .pdf, or document.pdf. */
export function pdfFileName(inputName: string): string {
  return outputFileName(inputName, 'pdf', 'document')
}
