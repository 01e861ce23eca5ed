import { runUtility } from '../common/run-utility.js'
import { startConverter } from './convert.js'
import { xlsToXlsxHandler } from './handler.js'

// The parser worker starts first: it loads SheetJS while this thread reads its configuration, the
// job's input record and the workbook. (A run that ends before converting exits with it.)
const converter = startConverter()

await runUtility(xlsToXlsxHandler(() => converter))
