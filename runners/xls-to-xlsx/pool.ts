import { handlerWorker, servePool } from '../common/pool-server.js'
import { type Converter, startConverter } from './convert.js'
import { xlsToXlsxHandler } from './handler.js'

/**
 * xls-to-xlsx in pool mode (docs/adr/0026-runner-pools.md): the job-mode handler, one job at a
 * time in a pod of one tenant. Each job gets a parser worker of its own, never used again (no
 * parser sees a second workbook); as in job mode, it is started ahead: the next job's starts as
 * soon as a job takes its own, so it has loaded before that job's workbook is in.
 */
let ahead: Converter = startConverter()

function converterForJob(): Converter {
  const mine = ahead
  ahead = startConverter()
  return mine
}

await servePool((log) => handlerWorker(xlsToXlsxHandler(converterForJob), log))
