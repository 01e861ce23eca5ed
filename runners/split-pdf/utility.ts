import Type from 'typebox'
import type { UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl } from '../../contract/url-schemas.js'
import { SPLIT_PDF_LIMITS } from './limits.js'

export { SPLIT_PDF_LIMITS }

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
    // Little's law on one 2-core node (docs/operations.md): 4 keep it busy, 6 leave no gap.
    concurrency: 6,
  },
}
