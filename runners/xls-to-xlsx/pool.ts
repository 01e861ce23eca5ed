import { handlerWorker, servePool } from '../common/pool-server.js'
import { startConverter } from './convert.js'
import { xlsToXlsxHandler } from './handler.js'

/**
 * xls-to-xlsx in pool mode (docs/adr/0026-runner-pools.md): the job-mode handler, one job at a
 * time in a pod of one tenant, each job with a parser worker of its own started when its
 * workbook is in.
 */
await servePool((log) => handlerWorker(xlsToXlsxHandler(startConverter), log))
