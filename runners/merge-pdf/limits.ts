// Plain data: the runner reads its limits without loading the catalog entry's TypeBox schema.
export const MERGE_PDF_LIMITS = {
  minFiles: 2,
  maxFiles: 100,
  /** Per input, as split-pdf. */
  maxBytes: 150 * 1024 * 1024,
  maxPages: 500,
  /** All inputs together. */
  maxTotalBytes: 300 * 1024 * 1024,
  maxTotalPages: 2000,
  /**
   * Indirect objects of one input (its object streams unpacked): far above what 500 real pages
   * hold, and what bounds the objects one input can copy into the merged document.
   */
  maxObjects: 250_000,
  /** Bytes of the merged document, checked as each object is written: twice the inputs' cap. */
  maxOutputBytes: 600 * 1024 * 1024,
  /**
   * s3:// inputs are read with the job's own storage credentials, whose policy names each source
   * job; a storage service bounds that policy's size (2,048 characters on MinIO and AWS STS).
   */
  maxStorageSourceJobs: 10,
  /**
   * The V8 heap of the worker that parses and merges: past it the merge fails as
   * upstream_rejected instead of the runner dying. Decoded stream data is capped separately
   * (runners/common/pdf-decode-guard.ts).
   */
  workerHeapMb: 1024,
} as const
