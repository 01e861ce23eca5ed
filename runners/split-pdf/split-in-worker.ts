import { KeptWorker } from '../common/kept-worker.js'
import { rejected, RunnerError } from '../common/runner-error.js'
import type { JobErrorCode } from '../../contract/error-codes.js'
import type { SplitSelection } from './groups.js'
import type { ToMain, ToWorker } from './split.worker.js'

export interface SplitPage {
  /** The pages (1-based) the file holds. */
  pages: number[]
  bytes: Uint8Array
}

const WORKER_URL = new URL('./split.worker.js', import.meta.url)

/** The split worker between splits (runners/common/kept-worker.ts). */
const kept = new KeptWorker()
let splits = 0

/** The thread id of the split worker kept for the next split, if one is kept. */
export function keptSplitWorker(): number | null {
  return kept.threadId
}

/**
 * Splits in a heap-capped worker (split.worker.ts): the page counts (in and out) first, then the files.
 * Running out of the worker's heap is a classified failure naming the limit.
 */
export async function splitInWorker(
  bytes: Uint8Array,
  maxPages: number,
  heapMb: number,
  ahead = 8,
  workerUrl: URL = WORKER_URL,
  selection?: SplitSelection,
): Promise<{ total: number; pagesOut: number; pages: AsyncGenerator<SplitPage> }> {
  const job = ++splits
  const queue: Array<ToMain | { type: 'error'; err: unknown }> = []
  let notify: (() => void) | undefined
  const push = (m: ToMain | { type: 'error'; err: unknown }) => {
    queue.push(m)
    notify?.()
  }
  /** The split is over: a worker that ended it cleanly waits for the next one; any other goes. */
  const { worker, end } = kept.lease(workerUrl, heapMb, {
    message: (m: ToMain) => push(m),
    error: (err) => push({ type: 'error', err }),
    exit: (code) => push({ type: 'error', err: new Error(`split worker exited with code ${code}`) }),
  })
  const nextMessage = async () => {
    while (queue.length === 0) await new Promise<void>((r) => (notify = r))
    const m = queue.shift()!
    if (m.type === 'error') {
      await end(false)
      const err = m.err as Error & { code?: string }
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY')
        throw rejected(`The PDF needs more than ${heapMb} MB of memory to split (memory limit).`)
      throw err
    }
    if (m.type === 'failed') {
      await end(true)
      throw new RunnerError(m.code as JobErrorCode, m.message)
    }
    return m
  }
  const credit = (n: number) => worker.postMessage({ type: 'credit', job, n } satisfies ToWorker)
  worker.postMessage({ type: 'split', job, bytes, maxPages, selection } satisfies ToWorker, [
    bytes.buffer as ArrayBuffer,
  ])
  let first: ToMain
  try {
    first = await nextMessage()
    if (first.type !== 'loaded') throw new Error(`split worker: unexpected ${first.type}`)
  } catch (err) {
    await end(false)
    throw err
  }
  credit(ahead)
  async function* pages(): AsyncGenerator<SplitPage> {
    let done = false
    try {
      for (;;) {
        const m = await nextMessage()
        if (m.type === 'done') {
          done = true
          return
        }
        if (m.type === 'page') {
          credit(1)
          yield { pages: m.pages, bytes: m.bytes }
        }
      }
    } finally {
      await end(done)
    }
  }
  return { total: first.total, pagesOut: first.pagesOut, pages: pages() }
}
