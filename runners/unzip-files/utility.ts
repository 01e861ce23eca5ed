import Type from 'typebox'
import type { UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl } from '../../contract/url-schemas.js'

export const unzipFiles: UtilityDefinition = {
  slug: 'unzip-files',
  name: 'Unzip files',
  description:
    'Extracts every entry of a .zip (public URL or s3:// URL) and returns one link per file (archive at most 1 GB, 1,000 entries, 2 GB unpacked; unsafe paths, symlinks and zip bombs are refused; nested archives are returned as files).',
  category: 'archive',
  icon: 'unarchive',
  target: 'files',
  maxDurationSeconds: 900,
  inputSchema: Type.Object({ url: StorageOrHttpUrl }, { additionalProperties: false }),
  exampleInput: { url: 'https://example.com/bundle.zip' },
  enabled: true,
  runner: {
    image: 'dutil-runner-unzip-files',
    entry: 'dist/runners/unzip-files/bundle/main.js',
    progressUnit: 'entries',
    maxHeapMb: 256,
    // --expose-gc: runners/common/memory.ts collects dead buffers as it streams.
    nodeFlags: ['--max-semi-space-size=1', '--expose-gc'],
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
    backoffLimit: 2,
    concurrency: 8,
    // The archive is spooled here (at most 1 GB).
    scratchSizeLimit: '1200Mi',
  },
}
