// Plain data: the runner reads its limits without loading the catalog entry's TypeBox schema.
export const SPLIT_PDF_LIMITS = {
  maxBytes: 150 * 1024 * 1024,
  maxPages: 500,
  /**
   * The V8 heap of the worker that parses and splits: past it the split fails as
   * upstream_rejected instead of the runner dying (and being retried). Decoded stream data is
   * capped separately (runners/common/pdf-decode-guard.ts).
   */
  workerHeapMb: 1024,
} as const
