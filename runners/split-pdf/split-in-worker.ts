import { Worker } from 'node:worker_threads'
import { rejected, RunnerError } from '../common/runner-error.js'
import type { JobErrorCode } from '../../contract/error-codes.js'
import type { ToMain } from './split.worker.js'

export interface SplitPage {
  pageNumber: number
  bytes: Uint8Array
}

/**
 * Splits in a heap-capped worker (split.worker.ts): yields the page count first, then pages.
 * Running out of the worker's heap is a classified failure naming the limit.
 */
export async function splitInWorker(
  bytes: Uint8Array,
  maxPages: number,
  heapMb: number,
  ahead = 8,
): Promise<{ total: number; pages: AsyncGenerator<SplitPage> }> {
  const worker = new Worker(new URL('./split.worker.js', import.meta.url), {
    workerData: { bytes, maxPages },
    transferList: [bytes.buffer as ArrayBuffer],
    resourceLimits: { maxOldGenerationSizeMb: heapMb },
  })
  const queue: Array<ToMain | { type: 'error'; err: unknown }> = []
  let notify: (() => void) | undefined
  const push = (m: ToMain | { type: 'error'; err: unknown }) => {
    queue.push(m)
    notify?.()
  }
  worker.on('message', (m: ToMain) => push(m))
  worker.on('error', (err) => push({ type: 'error', err }))
  worker.on('exit', (code) => push({ type: 'error', err: new Error(`split worker exited with code ${code}`) }))
  const nextMessage = async () => {
    while (queue.length === 0) await new Promise<void>((r) => (notify = r))
    const m = queue.shift()!
    if (m.type === 'error') {
      const err = m.err as Error & { code?: string }
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY')
        throw rejected(`The PDF needs more than ${heapMb} MB of memory to split (memory limit).`)
      throw err
    }
    if (m.type === 'failed') throw new RunnerError(m.code as JobErrorCode, m.message)
    return m
  }
  let first: ToMain
  try {
    first = await nextMessage()
  } catch (err) {
    await worker.terminate()
    throw err
  }
  if (first.type !== 'loaded') throw new Error(`split worker: unexpected ${first.type}`)
  worker.postMessage({ type: 'credit', n: ahead })
  async function* pages(): AsyncGenerator<SplitPage> {
    try {
      for (;;) {
        const m = await nextMessage()
        if (m.type === 'done') return
        if (m.type === 'page') {
          worker.postMessage({ type: 'credit', n: 1 })
          yield { pageNumber: m.pageNumber, bytes: m.bytes }
        }
      }
    } finally {
      await worker.terminate()
    }
  }
  return { total: first.total, pages: pages() }
}
