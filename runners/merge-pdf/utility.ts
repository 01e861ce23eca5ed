import Type from 'typebox'
import { grantSourcesOf } from '../../contract/storage-grant.js'
import { outputKeyOwner, uploadKeyOwner } from '../../contract/storage-inputs.js'
import { parseS3Url } from '../../contract/storage-keys.js'
import type { InputProblem, UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl } from '../../contract/url-schemas.js'
import { documentInfoSchema } from '../common/document-info-schema.js'
import { MERGE_PDF_LIMITS } from './limits.js'

export { MERGE_PDF_LIMITS }

/**
 * s3:// inputs may come from a bounded number of earlier jobs and upload requests (limits.ts
 * says why; a request's uploads together count once: contract/storage-grant.ts).
 */
export function checkMergePdf(input: unknown): InputProblem[] {
  const files = (input as { files: Array<{ url: string }> }).files
  const keys: string[] = []
  const max = MERGE_PDF_LIMITS.maxStorageSourceJobs
  for (const [i, f] of files.entries()) {
    const key = parseS3Url(f.url)?.key
    if (key === undefined || (!outputKeyOwner(key) && !uploadKeyOwner(key))) continue
    keys.push(key)
    if (grantSourcesOf(keys).length > max)
      return [
        {
          path: `files.${i}.url`,
          message: `s3:// inputs may come from at most ${max} different jobs or upload requests in one merge`,
        },
      ]
  }
  return []
}

export const mergePdf: UtilityDefinition = {
  slug: 'merge-pdf',
  name: 'Merge PDFs',
  description:
    'Merges 2 to 100 PDFs, in the order given, into one PDF (each at most 150 MB and 500 pages, no password protection; 300 MB and 2,000 pages in all).',
  category: 'pdf',
  icon: 'merge',
  target: 'pdf',
  maxDurationSeconds: 900,
  inputSchema: Type.Object(
    {
      files: Type.Array(
        Type.Object(
          {
            url: StorageOrHttpUrl,
            rotate: Type.Optional(
              Type.Union([Type.Literal(90), Type.Literal(180), Type.Literal(270)], {
                description:
                  "Turns every page of this PDF clockwise by 90, 180 or 270 degrees (added to the page's own).",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        {
          minItems: MERGE_PDF_LIMITS.minFiles,
          maxItems: MERGE_PDF_LIMITS.maxFiles,
          description: 'The PDFs to merge, in order.',
        },
      ),
      info: Type.Optional(
        documentInfoSchema(
          "The merged PDF's document information, as PDF readers show it in its properties (the inputs' own are not kept).",
        ),
      ),
    },
    { additionalProperties: false },
  ),
  exampleInput: { files: [{ url: 'https://example.com/cover.pdf' }, { url: 'https://example.com/report.pdf' }] },
  enabled: true,
  checkInput: checkMergePdf,
  runner: {
    image: 'dutil-runner-merge-pdf',
    entry: 'dist/runners/merge-pdf/bundle/main.js',
    progressUnit: 'pages',
    // The main thread only downloads and uploads; pdf-lib runs in a worker with its own heap cap.
    maxHeapMb: 256,
    resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '2Gi' } },
    backoffLimit: 2,
    concurrency: 6,
  },
}
