import { mapBounded } from '../common/bounded.js'
import { downloadInput } from '../common/read-input.js'
import type { UtilityHandler } from '../common/run-utility.js'
import type { SplitSelection } from './groups.js'
import { groupFileName } from './page-names.js'
import { splitInWorker } from './split-in-worker.js'
import { SPLIT_PDF_LIMITS } from './limits.js'

interface SplitPdfInput extends SplitSelection {
  url: string
}

/** Pages stored at once: storage round trips, not splitting, dominate a many-page run. */
const UPLOAD_CONCURRENCY = 8

export const handler: UtilityHandler<SplitPdfInput> = async ({ config, input, storage, store, progress }) => {
  const bytes = await downloadInput(input.url, {
    storage,
    ...config.outbound,
    maxBytes: SPLIT_PDF_LIMITS.maxBytes,
    what: 'PDF',
  })
  const selection: SplitSelection = { every: input.every, pages: input.pages, unify: input.unify }
  const { total, pagesOut, pages } = await splitInWorker(
    bytes,
    SPLIT_PDF_LIMITS.maxPages,
    SPLIT_PDF_LIMITS.workerHeapMb,
    undefined,
    undefined,
    selection,
  )
  let stored = 0
  progress(0, pagesOut)
  // Each file's pageNumber is its first page.
  const files = await mapBounded(pages, UPLOAD_CONCURRENCY, async (page) => {
    const file = await store(
      groupFileName(page.pages, total),
      Buffer.from(page.bytes.buffer, page.bytes.byteOffset, page.bytes.byteLength),
      'application/pdf',
      { pageNumber: page.pages[0] },
    )
    stored += page.pages.length
    progress(stored, pagesOut)
    return file
  })
  return { files, extras: { pageCount: total } }
}
