import Type from 'typebox'
import type { UtilityDefinition } from '../../contract/utility.js'
import { StorageOrHttpUrl } from '../../contract/url-schemas.js'

export const xlsToXlsx: UtilityDefinition = {
  slug: 'xls-to-xlsx',
  name: 'XLS to XLSX',
  description: 'Converts a legacy .xls workbook (binary BIFF, at most 50 MB) to .xlsx, every sheet kept, values only.',
  category: 'spreadsheet',
  icon: 'table_view',
  target: 'xlsx',
  maxDurationSeconds: 300,
  inputSchema: Type.Object({ url: StorageOrHttpUrl }, { additionalProperties: false }),
  exampleInput: { url: 'https://example.com/report.xls' },
  enabled: true,
  runner: {
    image: 'dutil-runner-xls-to-xlsx',
    entry: 'dist/runners/xls-to-xlsx/bundle/main.js',
    external: ['xlsx'],
    // The main thread only downloads and uploads; SheetJS runs in a worker with its own 256 MB cap.
    maxHeapMb: 128,
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
    backoffLimit: 1,
    concurrency: 8,
  },
}
