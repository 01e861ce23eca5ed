import { parentPort, workerData } from 'node:worker_threads'
import { RunnerError } from '../common/runner-error.js'
import { loadSplittable, splitPages } from './split.js'

/**
 * Loads and splits a PDF inside a worker thread whose V8 heap is capped, so a document that
 * needs more memory than the runner has fails as a classified error instead of killing the
 * runner (which the Job would retry). Pages go to the main thread one by one; it hands out
 * credits, so at most a few pages wait in memory.
 */
export type ToMain =
  | { type: 'loaded'; total: number }
  | { type: 'page'; pageNumber: number; bytes: Uint8Array }
  | { type: 'done' }
  | { type: 'failed'; code: string; message: string }

const port = parentPort!
const { bytes, maxPages } = workerData as { bytes: Uint8Array; maxPages: number }
let credits = 0
let wake: (() => void) | undefined
port.on('message', (m: { type: 'credit'; n: number }) => {
  credits += m.n
  wake?.()
})

async function credit(): Promise<void> {
  while (credits === 0) await new Promise<void>((r) => (wake = r))
  credits--
}

try {
  const doc = await loadSplittable(bytes, maxPages)
  port.postMessage({ type: 'loaded', total: doc.getPageCount() } satisfies ToMain)
  for await (const page of splitPages(doc)) {
    await credit()
    port.postMessage({ type: 'page', pageNumber: page.pageNumber, bytes: page.bytes } satisfies ToMain, [
      page.bytes.buffer as ArrayBuffer,
    ])
  }
  port.postMessage({ type: 'done' } satisfies ToMain)
} catch (err) {
  if (err instanceof RunnerError)
    port.postMessage({ type: 'failed', code: err.code, message: err.message } satisfies ToMain)
  else throw err
} finally {
  port.close()
}
