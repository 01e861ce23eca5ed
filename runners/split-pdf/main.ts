import { mapBounded } from '../common/bounded.js'
import { downloadInput } from '../common/read-input.js'
import { runUtility } from '../common/run-utility.js'
import { loadSplittable, pageFileName, splitPages } from './split.js'
import { SPLIT_PDF_LIMITS } from './utility.js'

interface SplitPdfInput {
  url: string
}

/** Pages stored at once: storage round trips, not splitting, dominate a many-page run. */
const UPLOAD_CONCURRENCY = 8

await runUtility<SplitPdfInput>(async ({ config, input, storage, store }) => {
  const bytes = await downloadInput(input.url, {
    storage,
    allowLoopback: config.allowLoopbackUrls,
    maxBytes: SPLIT_PDF_LIMITS.maxBytes,
    what: 'PDF',
  })
  const doc = await loadSplittable(bytes, SPLIT_PDF_LIMITS.maxPages)
  const total = doc.getPageCount()
  const files = await mapBounded(splitPages(doc), UPLOAD_CONCURRENCY, (page) =>
    store(pageFileName(page.pageNumber, total), Buffer.from(page.bytes.buffer, page.bytes.byteOffset, page.bytes.byteLength), 'application/pdf', { pageNumber: page.pageNumber }),
  )
  return { files, extras: { pageCount: total } }
})
