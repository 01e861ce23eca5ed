import type { PaperFormat, PDFOptions } from 'puppeteer-core'
import { outputFileName } from '../common/file-names.js'

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
  if (o.tagged !== undefined) out.tagged = o.tagged
  // Chromium builds the outline from the tagged structure: an outline asks for a tagged PDF.
  if (o.outline) {
    out.outline = true
    out.tagged = true
  }
  return out
}

/** The output's file name: the input's base name with .pdf, or document.pdf. */
export function pdfFileName(inputName: string): string {
  return outputFileName(inputName, 'pdf', 'document')
}
