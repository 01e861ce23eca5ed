import Type from 'typebox'
import type { InputProblem, UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl } from '../../contract/url-schemas.js'
import { PAGE_RANGES_PATTERN } from '../../contract/page-ranges.js'
import { SPLIT_PDF_LIMITS } from './limits.js'

export { SPLIT_PDF_LIMITS }

/** Rules between the options that JSON Schema cannot say plainly. */
export function checkSplitPdf(input: unknown): InputProblem[] {
  const i = input as { every?: number; pages?: string; unify?: boolean }
  const problems: InputProblem[] = []
  if (i.every !== undefined && i.pages !== undefined)
    problems.push({ path: 'every', message: 'give every or pages, not both' })
  if (i.unify !== undefined && i.pages === undefined)
    problems.push({ path: 'unify', message: 'is taken only with pages' })
  return problems
}

export const splitPdf: UtilityDefinition = {
  slug: 'split-pdf',
  name: 'Split PDF',
  description:
    'Splits a PDF into one single-page PDF per page, into files of every n pages, or takes the pages asked for, one file each or one in all (at most 150 MB and 500 pages, no password protection).',
  category: 'pdf',
  icon: 'call_split',
  target: 'pdf',
  maxDurationSeconds: 900,
  inputSchema: Type.Object(
    {
      url: StorageOrHttpUrl,
      every: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: SPLIT_PDF_LIMITS.maxPages,
          description:
            'Files of this many pages each, in order (the last may have fewer). Default: 1, a file per page.',
        }),
      ),
      pages: Type.Optional(
        Type.String({
          maxLength: 200,
          pattern: PAGE_RANGES_PATTERN,
          description:
            'Only these pages, in the order given, e.g. "1-3,5" or "4-" (to the end): a file each, or one file of them all with unify. Not with every.',
        }),
      ),
      unify: Type.Optional(
        Type.Boolean({ description: 'With pages: one file of the pages asked for, instead of a file each.' }),
      ),
    },
    { additionalProperties: false, description: 'The PDF to split, and how.' },
  ),
  checkInput: checkSplitPdf,
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
