import { rejected } from '../common/runner-error.js'
import { selectedPages } from '../common/page-ranges.js'

/** How a PDF is split (split-pdf's input beside its url). */
export interface SplitSelection {
  /** Files of this many pages each, in order (the last may have fewer). */
  every?: number
  /** Only these pages (page ranges): one file each, or one file of them all with `unify`. */
  pages?: string
  unify?: boolean
}

/**
 * The output files of a split of a `total`-page document, as the pages (1-based) each holds:
 * one file per page by default; files of `every` pages; or the `pages` asked for, one file each
 * or, with `unify`, one file of them in the order asked.
 */
export function pageGroups(total: number, s: SplitSelection = {}): number[][] {
  if (s.pages !== undefined) {
    const pages = selectedPages(s.pages, total)
    return s.unify ? [pages] : pages.map((p) => [p])
  }
  const every = s.every ?? 1
  if (!Number.isInteger(every) || every < 1) throw rejected('every must be a whole number of pages, 1 or more.')
  const groups: number[][] = []
  for (let first = 1; first <= total; first += every)
    groups.push(Array.from({ length: Math.min(every, total - first + 1) }, (_, i) => first + i))
  return groups
}
