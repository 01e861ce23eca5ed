/**
 * A PDF's outline (its bookmarks) as qpdf's JSON update writes it (pure): each bookmark an
 * outline item dictionary opening its page whole (`/Fit`), linked to its parent and siblings
 * as the PDF format asks (ISO 32000-2, 12.3.3).
 */

/** A bookmark to write: its title, the page it opens (from 1), and the bookmarks under it. */
export interface BookmarkToWrite {
  title: string
  page: number
  children?: BookmarkToWrite[]
}

/** Every bookmark of a tree, at every level (no recursion: a deep tree is walked as a flat one). */
function* everyBookmark(marks: readonly BookmarkToWrite[]): Generator<BookmarkToWrite> {
  const stack = [...marks]
  while (stack.length) {
    const m = stack.pop()!
    yield m
    if (m.children) stack.push(...m.children)
  }
}

/** Bookmarks in all, at every level. */
export function bookmarkCount(marks: readonly BookmarkToWrite[]): number {
  let n = 0
  for (const _ of everyBookmark(marks)) n++
  return n
}

/** The first page a bookmark names past `pageCount`, if any. */
export function pageOutside(marks: readonly BookmarkToWrite[], pageCount: number): number | undefined {
  for (const m of everyBookmark(marks)) if (m.page > pageCount) return m.page
  return undefined
}

type Objects = Record<string, { value: Record<string, unknown> }>

/**
 * The objects of an outline of `marks`, numbered from `firstId`: the outline dictionary (its
 * reference is returned) and one item per bookmark. `pageRefs[i]` is page i + 1's object.
 */
export function outlineObjects(
  marks: readonly BookmarkToWrite[],
  pageRefs: readonly string[],
  firstId: number,
): { objects: Objects; outlines: string; nextId: number } {
  let next = firstId
  const ref = (id: number) => `${id} 0 R`
  const objects: Objects = {}
  const outlinesId = next++
  /** Writes `level` under `parent`; returns its first and last item and the items open below it. */
  const write = (level: readonly BookmarkToWrite[], parent: number): { first: number; last: number; count: number } => {
    const ids = level.map(() => next++)
    let count = level.length
    level.forEach((m, i) => {
      const value: Record<string, unknown> = {
        '/Title': `u:${m.title}`,
        '/Parent': ref(parent),
        '/Dest': [pageRefs[m.page - 1], '/Fit'],
      }
      if (i > 0) value['/Prev'] = ref(ids[i - 1]!)
      if (i < level.length - 1) value['/Next'] = ref(ids[i + 1]!)
      if (m.children?.length) {
        const below = write(m.children, ids[i]!)
        Object.assign(value, { '/First': ref(below.first), '/Last': ref(below.last), '/Count': below.count })
        count += below.count
      }
      objects[`obj:${ref(ids[i]!)}`] = { value }
    })
    return { first: ids[0]!, last: ids[ids.length - 1]!, count }
  }
  const top = marks.length ? write(marks, outlinesId) : undefined
  objects[`obj:${ref(outlinesId)}`] = {
    value: {
      '/Type': '/Outlines',
      ...(top ? { '/First': ref(top.first), '/Last': ref(top.last), '/Count': top.count } : {}),
    },
  }
  return { objects, outlines: ref(outlinesId), nextId: next }
}

/** The page objects of qpdf's `--json-key=pages`, in page order. */
export function pageRefsOf(report: unknown): string[] {
  const pages = (report as { pages?: Array<{ object?: unknown }> }).pages
  if (!Array.isArray(pages)) return []
  return pages.map((p) => (typeof p?.object === 'string' ? p.object : ''))
}
