import { createReadStream } from 'node:fs'

/** A page object's dictionary entry (never /Pages, a node of the page tree). */
const PAGE = /\/Type\s{0,8}\/Page(?![A-Za-z])/g
/** Kept from one chunk to the next (longer than an entry), so an entry split across two chunks is seen whole. */
const OVERLAP = 32

/** The page entries in `text` ending past `from`; one ending at the text's end counts only when `final` (what follows may be "s"). */
function pageEntries(text: string, from: number, final: boolean): { count: number; upTo: number } {
  let count = 0
  let upTo = from
  PAGE.lastIndex = 0
  for (let m = PAGE.exec(text); m; m = PAGE.exec(text)) {
    const end = m.index + m[0].length
    if (end <= from || (end === text.length && !final)) continue
    count++
    upTo = end
  }
  return { count, upTo }
}

/**
 * The pages of a PDF that LibreOffice wrote: its page objects, counted while the file streams
 * past (memory stays flat whatever its size). LibreOffice writes every object plainly (no object
 * streams), so each page's `/Type /Page` is in the file as it is.
 */
export async function countPdfPages(path: string): Promise<number> {
  let count = 0
  let text = ''
  /** Where in `text` the entries counted so far end. */
  let counted = 0
  for await (const chunk of createReadStream(path, { encoding: 'latin1', highWaterMark: 1024 * 1024 })) {
    text += chunk as string
    const found = pageEntries(text, counted, false)
    count += found.count
    const keep = Math.min(OVERLAP, text.length)
    counted = Math.max(0, found.upTo - (text.length - keep))
    text = text.slice(text.length - keep)
  }
  return count + pageEntries(text, counted, true).count
}
