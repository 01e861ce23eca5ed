// Plain data: the runner reads its limits without loading the catalog entry's TypeBox schema.
export const OFFICE_PDF_LIMITS = {
  /** The document as downloaded. */
  maxBytes: 100 * 1024 * 1024,
  /** The PDF made from it: more pages than this is refused. */
  maxPages: 2000,
  /** The time limit of a job (seconds). */
  maxDurationSeconds: 300,
  /** A pool pod's LibreOffice is started anew after this many conversions. */
  restartEvery: 50,
} as const
