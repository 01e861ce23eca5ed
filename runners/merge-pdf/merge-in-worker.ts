import { KeptWorker } from '../common/kept-worker.js'
import type { JobErrorCode } from '../../contract/error-codes.js'
import { rejected, RunnerError } from '../common/runner-error.js'
import type { DocumentInfo, MergeLimits, Pieces, Rotation } from './merge.js'
import type { ToMain, ToWorker } from './merge.worker.js'

const WORKER_URL = new URL('./merge.worker.js', import.meta.url)

/** The merge worker between merges (runners/common/kept-worker.ts). */
const kept = new KeptWorker()
let merges = 0

/** The thread id of the merge worker kept for the next merge, if one is kept. */
export function keptMergeWorker(): number | null {
  return kept.threadId
}

export interface WorkerMerge {
  /**
   * Sends one input (transferred, not copied); resolves with its page count and the bytes of the
   * merged document it added, to be written out before the next.
   */
  add(bytes: Uint8Array, rotate?: Rotation): Promise<{ pages: number; pieces: Pieces }>
  /** The rest of the merged PDF and its page count; the merge is over. */
  finish(info?: DocumentInfo): Promise<{ pieces: Pieces; pageCount: number }>
  /** Ends the merge early (a failed download or upload): the worker is not kept. */
  abort(): Promise<void>
}

/** Starts a merge in a heap-capped worker (merge.worker.ts). */
export async function mergeInWorker(
  limits: MergeLimits,
  heapMb: number,
  workerUrl: URL = WORKER_URL,
): Promise<WorkerMerge> {
  const job = ++merges
  let waiting: { resolve: (m: ToMain) => void; reject: (err: unknown) => void } | undefined
  let broken: unknown
  const fail = (err: unknown) => {
    broken ??= err
    waiting?.reject(err)
    waiting = undefined
  }
  const { worker, end } = kept.lease(workerUrl, heapMb, {
    message: (m: ToMain) => {
      if (m.job !== job) return
      waiting?.resolve(m)
      waiting = undefined
    },
    error: fail,
    exit: (code) => fail(new Error(`merge worker exited with code ${code}`)),
  })
  /** One request, one reply; a classified refusal ends the merge with the worker kept. */
  const ask = async (m: ToWorker, transfer: ArrayBuffer[] = []): Promise<ToMain> => {
    if (broken) throw broken
    const reply = new Promise<ToMain>((resolve, reject) => (waiting = { resolve, reject }))
    worker.postMessage(m, transfer)
    let r: ToMain
    try {
      r = await reply
    } catch (err) {
      await end(false)
      if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY')
        throw rejected(`The PDFs need more than ${heapMb} MB of memory to merge (memory limit).`)
      throw err
    }
    if (r.type === 'failed') {
      await end(true)
      throw new RunnerError(r.code as JobErrorCode, r.message)
    }
    return r
  }
  await ask({ type: 'begin', job, limits })
  return {
    async add(bytes, rotate) {
      // A small Buffer is a view into Node's shared pool, which must not be transferred: copy it.
      const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes)
      const r = await ask({ type: 'add', job, bytes: own, ...(rotate ? { rotate } : {}) }, [own.buffer as ArrayBuffer])
      if (r.type !== 'added') throw new Error(`merge worker: unexpected ${r.type}`)
      return { pages: r.pages, pieces: r.pieces }
    },
    async finish(info) {
      const r = await ask({ type: 'finish', job, ...(info ? { info } : {}) })
      if (r.type !== 'finished') throw new Error(`merge worker: unexpected ${r.type}`)
      await end(true)
      return { pieces: r.pieces, pageCount: r.pageCount }
    },
    abort: () => end(false),
  }
}
