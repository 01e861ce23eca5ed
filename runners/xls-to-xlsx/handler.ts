import { downloadInput } from '../common/read-input.js'
import type { UtilityHandler } from '../common/run-utility.js'
import { type Converter, XLS_LIMITS, xlsxFileName } from './convert.js'

interface XlsToXlsxInput {
  url: string
}

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

/**
 * SheetJS 0.18.5 (the last on the registry) has known parser vulnerabilities; this runner is
 * built to contain them (docs/security/sheetjs-residual-risk.md): it holds no storage
 * credentials (a presigned grant for its own objects only), only binary .xls reaches the
 * parser, and the parser runs in a worker with frozen prototypes, a heap cap and a time budget.
 *
 * The handler is given where its parser worker comes from: started ahead in job mode (main.ts),
 * ahead of each job in pool mode too (pool.ts), so no parser ever sees a second workbook.
 */
export const xlsToXlsxHandler =
  (converterFor: () => Converter): UtilityHandler<XlsToXlsxInput> =>
  async ({ config, input, storage, store, log }) => {
    const bytes = await downloadInput(input.url, {
      storage,
      ...config.outbound,
      maxBytes: XLS_LIMITS.maxInputBytes,
      what: 'workbook',
    })
    const converted = await converterFor().convert(bytes)
    if (!converted.prototypeIntact)
      log.warn('the parser worker saw Object.prototype change; its output is still only cell values')
    log.info({ reader: converted.reader, fallback: converted.fallback, sheets: converted.sheets }, 'workbook read')
    const name = xlsxFileName(decodeURIComponent(new URL(input.url).pathname.split('/').pop() ?? ''))
    const file = await store(name, converted.xlsx, XLSX_TYPE)
    return { files: [file] }
  }
