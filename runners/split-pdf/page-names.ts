// Kept apart from split.ts: the runner's main thread names pages without loading pdf-lib (only
// the split worker needs it).
const padded = (n: number, total: number) => String(n).padStart(Math.max(3, String(total).length), '0')

/** File name of page n (1-indexed), zero-padded so names sort in page order. */
export function pageFileName(n: number, total: number): string {
  return `page-${padded(n, total)}.pdf`
}

/**
 * File name of an output holding `pages` (1-indexed): a single page is `page-007.pdf`, a run of
 * pages `pages-001-003.pdf`, any other selection `pages-002-and-more.pdf` after its first page.
 */
export function groupFileName(pages: readonly number[], total: number): string {
  if (pages.length === 1) return pageFileName(pages[0], total)
  const consecutive = pages.every((p, i) => i === 0 || p === pages[i - 1] + 1)
  const first = padded(pages[0], total)
  return consecutive ? `pages-${first}-${padded(pages[pages.length - 1], total)}.pdf` : `pages-${first}-and-more.pdf`
}
