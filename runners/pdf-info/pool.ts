import { handlerWorker, servePool } from '../common/pool-server.js'
import { handler } from './handler.js'

/** pdf-info in pool mode (docs/adr/0026-runner-pools.md): the job-mode handler, one job at a time in a pod of one tenant. */
await servePool((log) => handlerWorker(handler, log))
