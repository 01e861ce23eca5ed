// Plain data: the runner reads its limits without loading the catalog entry's TypeBox schema.
export const PDF_INFO_LIMITS = {
  /** The PDF read (downloaded to the job's scratch space, never whole in memory). */
  maxBytes: 150 * 1024 * 1024,
  /** The longest one qpdf run may take (the job's own time limit stops it too). */
  qpdfTimeoutMs: 60_000,
  /** What qpdf may write on its standard output (the document's structure as JSON) or error. */
  maxReportBytes: 16 * 1024 * 1024,
  /** Bookmarks read from one outline (a book's is some hundreds). */
  maxBookmarks: 10_000,
} as const
