import type { UtilityDefinition } from '../contract/utility.js'
import { editPdf } from './edit-pdf/utility.js'
import { htmlImage } from './html-image/utility.js'
import { htmlPdf } from './html-pdf/utility.js'
import { mergePdf } from './merge-pdf/utility.js'
import { officePdf } from './office-pdf/utility.js'
import { pdfInfo } from './pdf-info/utility.js'
import { splitPdf } from './split-pdf/utility.js'
import { unzipFiles } from './unzip-files/utility.js'
import { xlsToXlsx } from './xls-to-xlsx/utility.js'
import { zipFiles } from './zip-files/utility.js'

/**
 * The one list of utilities. The gateway validates and lists from it, the operator builds Jobs
 * from it, runners read their limits from it. Adding a utility: a folder under runners/ and one
 * line here.
 */
export const UTILITIES: readonly UtilityDefinition[] = [
  htmlPdf,
  htmlImage,
  officePdf,
  splitPdf,
  mergePdf,
  editPdf,
  pdfInfo,
  zipFiles,
  unzipFiles,
  xlsToXlsx,
]

export const catalog: ReadonlyMap<string, UtilityDefinition> = buildCatalog(UTILITIES)

export function buildCatalog(list: readonly UtilityDefinition[]): ReadonlyMap<string, UtilityDefinition> {
  const map = new Map<string, UtilityDefinition>()
  for (const u of list) {
    if (map.has(u.slug)) throw new Error(`duplicate utility slug in catalog: ${u.slug}`)
    map.set(u.slug, u)
  }
  return map
}

/** The utility for a slug, or undefined when unknown or disabled. */
export function enabledUtility(slug: string): UtilityDefinition | undefined {
  const u = catalog.get(slug)
  return u?.enabled ? u : undefined
}
