// Plain data: the runner reads its limits without loading the catalog entry's TypeBox schema.
export const EDIT_PDF_LIMITS = {
  /** The PDF edited (downloaded to the job's scratch space, never whole in memory). */
  maxBytes: 150 * 1024 * 1024,
  maxPages: 2000,
  /** The longest one qpdf run may take (the job's own time limit stops it too). */
  qpdfTimeoutMs: 120_000,
  /** A PDF made accessible (pdfua) is read whole by pdf-lib: about eight times its size in heap, within the runner's 192 MB. */
  maxAccessibleBytes: 15 * 1024 * 1024,
  /** The longest Ghostscript's rewrite (pdfa, pictures) may take: it redraws every page. */
  rewriteTimeoutMs: 600_000,
  /** What qpdf may write on its standard output (the document's structure as JSON) or error. */
  maxReportBytes: 16 * 1024 * 1024,
  /** A stamp's text, in characters. */
  maxStampText: 200,
  /** A stamp's picture or PDF (read whole: a picture is embedded, a PDF laid by qpdf). */
  maxStampBytes: 20 * 1024 * 1024,
  /** Files embedded: at most this many, each and all together at most so many bytes (spooled to scratch). */
  maxAttachments: 20,
  maxAttachmentBytes: 50 * 1024 * 1024,
  maxAttachmentsBytes: 200 * 1024 * 1024,
  /** A PNG stamp's pixels (pdf-lib decodes it: 4 bytes each). */
  maxStampPixels: 40_000_000,
  /** Bookmarks written: at most this many in all (pdf-info reads as many), this deep, titles this long. */
  maxBookmarks: 10_000,
  maxBookmarkDepth: 5,
  maxBookmarkTitle: 1000,
} as const
