// Kept apart from split.ts: the runner's main thread names pages without loading pdf-lib (only
// the split worker needs it).
/** File name of page n (1-indexed), zero-padded so names sort in page order. */
export function pageFileName(n: number, total: number): string {
  return `page-${String(n).padStart(Math.max(3, String(total).length), '0')}.pdf`
}
