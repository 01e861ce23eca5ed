import { parentPort } from 'node:worker_threads'
import { RunnerError } from '../common/runner-error.js'
import { type DocumentInfo, type MergeLimits, type Pieces, PdfMerger, type Rotation } from './merge.js'

/**
 * Parses and merges PDFs inside a worker thread whose V8 heap is capped, so a document that
 * needs more memory than the runner has fails as a classified error instead of killing the
 * runner. One merge at a time: the main thread sends the inputs one by one as it downloads them
 * and gets back, for each, the bytes of the merged document it added (transferred, not copied),
 * then the rest; a pool pod keeps the worker for its next job (pdf-lib loads once).
 */
export type ToWorker =
  | { type: 'begin'; job: number; limits: MergeLimits }
  | { type: 'add'; job: number; bytes: Uint8Array; rotate?: Rotation }
  | { type: 'finish'; job: number; info?: DocumentInfo }

export type ToMain =
  | { type: 'added'; job: number; pages: number; pieces: Pieces }
  | { type: 'finished'; job: number; pieces: Pieces; pageCount: number }
  | { type: 'failed'; job: number; code: string; message: string }

const port = parentPort!
let merger: PdfMerger | undefined

async function handle(m: ToWorker): Promise<ToMain | [ToMain, ArrayBuffer[]]> {
  if (m.type === 'begin') {
    merger = new PdfMerger(m.limits)
    return { type: 'added', job: m.job, pages: 0, pieces: [] }
  }
  if (!merger) throw new Error(`merge worker: ${m.type} before begin`)
  if (m.type === 'add') {
    const { pages, pieces } = await merger.add(m.bytes, m.rotate)
    return [{ type: 'added', job: m.job, pages, pieces }, buffersOf(pieces)]
  }
  const { pageCount, pieces } = merger.finish(m.info)
  merger = undefined
  return [{ type: 'finished', job: m.job, pieces, pageCount }, buffersOf(pieces)]
}

/** Every piece owns its buffer (PdfMerger allocates each one), so all of them are transferred. */
const buffersOf = (pieces: Pieces) => pieces.map((p) => p.buffer as ArrayBuffer)

// Messages are handled one after another, in order.
let chain = Promise.resolve()
port.on('message', (m: ToWorker) => {
  chain = chain.then(async () => {
    try {
      const reply = await handle(m)
      if (Array.isArray(reply)) port.postMessage(reply[0], reply[1])
      else port.postMessage(reply)
    } catch (err) {
      if (!(err instanceof RunnerError)) {
        // An unclassified failure ends the worker, as an uncaught error would.
        setImmediate(() => {
          throw err
        })
        return
      }
      merger = undefined
      port.postMessage({ type: 'failed', job: m.job, code: err.code, message: err.message } satisfies ToMain)
    }
  })
})
