import Type from 'typebox'
import type { UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl } from '../../contract/url-schemas.js'

export const SPLIT_PDF_LIMITS = {
  maxBytes: 150 * 1024 * 1024,
  maxPages: 500,
  /**
   * The V8 heap of the worker that parses and splits: past it the split fails as
   * upstream_rejected instead of the runner dying (and being retried). Decoded stream data is
   * capped separately (decode-guard.ts).
   */
  workerHeapMb: 1024,
} as const

export const splitPdf: UtilityDefinition = {
  slug: 'split-pdf',
  name: 'Split PDF',
  description: 'Splits a PDF into one single-page PDF per page (at most 150 MB and 500 pages, no password protection).',
  category: 'pdf',
  icon: 'call_split',
  target: 'pdf',
  maxDurationSeconds: 900,
  inputSchema: Type.Object(
    { url: StorageOrHttpUrl },
    { additionalProperties: false, description: 'The PDF to split.' },
  ),
  exampleInput: { url: 'https://example.com/report.pdf' },
  enabled: true,
  runner: {
    image: 'dutil-runner-split-pdf',
    entry: 'dist/runners/split-pdf/bundle/main.js',
    progressUnit: 'pages',
    // The main thread only downloads and uploads; pdf-lib runs in a worker with its own heap cap.
    maxHeapMb: 256,
    resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '2Gi' } },
    backoffLimit: 2,
    concurrency: 8,
  },
}
