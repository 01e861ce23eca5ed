import { downloadInput } from '../common/read-input.js'
import { runUtility } from '../common/run-utility.js'
import { loadSplittable, pageFileName, splitPages } from './split.js'
import { SPLIT_PDF_LIMITS } from './utility.js'

interface SplitPdfInput {
  url: string
}

await runUtility<SplitPdfInput>(async ({ config, input, storage, store }) => {
  const bytes = await downloadInput(input.url, {
    storage,
    allowLoopback: config.allowLoopbackUrls,
    maxBytes: SPLIT_PDF_LIMITS.maxBytes,
    what: 'PDF',
  })
  const doc = await loadSplittable(bytes, SPLIT_PDF_LIMITS.maxPages)
  const total = doc.getPageCount()
  const files = []
  for await (const page of splitPages(doc)) {
    files.push(await store(pageFileName(page.pageNumber, total), Buffer.from(page.bytes), 'application/pdf', { pageNumber: page.pageNumber }))
  }
  return { files, extras: { pageCount: total } }
})
