import { parentPort } from 'node:worker_threads'
import { RunnerError } from '../common/runner-error.js'
import { pageGroups, type SplitSelection } from './groups.js'
import { loadSplittable, splitPages } from './split.js'

/**
 * Loads and splits PDFs inside a worker thread whose V8 heap is capped, so a document that
 * needs more memory than the runner has fails as a classified error instead of killing the
 * runner (which the Job would retry). The worker splits one PDF at a time and waits for the
 * next: a pool pod keeps it, and pays for loading pdf-lib once rather than per job. Pages go to
 * the main thread one by one; it hands out credits for the split in progress, so at most a few
 * pages wait in memory.
 */
export type ToWorker =
  | { type: 'split'; job: number; bytes: Uint8Array; maxPages: number; selection?: SplitSelection }
  | { type: 'credit'; job: number; n: number }

export type ToMain =
  | { type: 'loaded'; total: number; pagesOut: number }
  | { type: 'page'; pages: number[]; bytes: Uint8Array }
  | { type: 'done' }
  | { type: 'failed'; code: string; message: string }

const port = parentPort!
/** The split in progress, and the credits its main thread has handed out. */
let current = 0
let credits = 0
let wake: (() => void) | undefined

async function credit(): Promise<void> {
  while (credits === 0) await new Promise<void>((r) => (wake = r))
  credits--
}

async function split(bytes: Uint8Array, maxPages: number, selection?: SplitSelection): Promise<void> {
  try {
    const doc = await loadSplittable(bytes, maxPages)
    const groups = pageGroups(doc.getPageCount(), selection)
    port.postMessage({
      type: 'loaded',
      total: doc.getPageCount(),
      pagesOut: groups.reduce((n, g) => n + g.length, 0),
    } satisfies ToMain)
    for await (const page of splitPages(doc, groups)) {
      await credit()
      port.postMessage({ type: 'page', pages: page.pages, bytes: page.bytes } satisfies ToMain, [
        page.bytes.buffer as ArrayBuffer,
      ])
    }
    port.postMessage({ type: 'done' } satisfies ToMain)
  } catch (err) {
    if (!(err instanceof RunnerError)) throw err // the worker dies: its main thread makes another
    port.postMessage({ type: 'failed', code: err.code, message: err.message } satisfies ToMain)
  }
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'credit') {
    // A credit for a split that ended (sent as its last page arrived) is not this one's.
    if (m.job !== current) return
    credits += m.n
    wake?.()
    return
  }
  current = m.job
  credits = 0
  split(m.bytes, m.maxPages, m.selection).catch((err: unknown) => {
    // An unclassified failure ends the worker, as an uncaught error would.
    setImmediate(() => {
      throw err
    })
  })
})
