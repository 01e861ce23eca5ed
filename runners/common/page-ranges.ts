import { rejected } from './runner-error.js'

/**
 * The pages (1-based) a ranges string that matches contract/page-ranges.ts selects in a document of
 * `total` pages, in the order given ("3,1-2" is 3, 1, 2). A page past the end, or a range that
 * runs backwards, is the input's fault: upstream_rejected naming it.
 */
export function selectedPages(ranges: string, total: number): number[] {
  const pages: number[] = []
  for (const part of ranges.split(',')) {
    const [fromText, toText] = part.split('-').map((s) => s.trim())
    const from = Number(fromText)
    const to = toText === undefined ? from : toText === '' ? total : Number(toText)
    if (from > total || to > total)
      throw rejected(`The PDF has ${total} pages; the pages asked for (${ranges.trim()}) go past its end.`)
    if (to < from) throw rejected(`The page range ${part.trim()} runs backwards.`)
    for (let p = from; p <= to; p++) pages.push(p)
  }
  return pages
}
