import { downloadInput, limitText } from '../common/read-input.js'
import type { UtilityHandler } from '../common/run-utility.js'
import { rejected, RunnerError } from '../common/runner-error.js'
import { MERGE_PDF_LIMITS } from './limits.js'
import { mergeInWorker } from './merge-in-worker.js'

interface MergePdfInput {
  files: Array<{ url: string }>
}

export const MERGED_FILE_NAME = 'merged.pdf'

/** A refusal about one input names it by its place in the request: "files.2: …". */
function aboutInput(index: number, err: unknown): unknown {
  if (!(err instanceof RunnerError) || err.code !== 'upstream_rejected') return err
  return rejected(`files.${index}: ${err.message}`, err.upstreamStatus)
}

/**
 * Downloads the inputs in order, the next one while the worker parses the current, and appends
 * each one's pages to the merged document; memory holds the document so far and two inputs at
 * most. Progress counts pages merged (the total is known only at the end).
 */
export const handler: UtilityHandler<MergePdfInput> = async ({ config, input, storage, store, progress }) => {
  const download = (i: number) => {
    const p = downloadInput(input.files[i].url, {
      storage,
      ...config.outbound,
      maxBytes: MERGE_PDF_LIMITS.maxBytes,
      what: 'PDF',
    }).catch((err: unknown) => {
      throw aboutInput(i, err)
    })
    p.catch(() => {})
    return p
  }
  // The first download runs while the worker starts and loads pdf-lib.
  let next = download(0)
  const merge = await mergeInWorker(
    { maxPages: MERGE_PDF_LIMITS.maxPages, maxTotalPages: MERGE_PDF_LIMITS.maxTotalPages },
    MERGE_PDF_LIMITS.workerHeapMb,
  )
  let pages = 0
  let bytesInAll = 0
  let saved: { bytes: Uint8Array; pageCount: number }
  try {
    progress(0, null)
    for (let i = 0; i < input.files.length; i++) {
      const bytes = await next
      if (i + 1 < input.files.length) next = download(i + 1)
      bytesInAll += bytes.length
      if (bytesInAll > MERGE_PDF_LIMITS.maxTotalBytes)
        throw rejected(
          `files.${i}: the PDFs up to this one pass the ${limitText(MERGE_PDF_LIMITS.maxTotalBytes)} limit for all inputs together.`,
        )
      try {
        pages += await merge.add(bytes)
      } catch (err) {
        throw aboutInput(i, err)
      }
      progress(pages, null)
    }
    saved = await merge.save()
  } catch (err) {
    await merge.abort()
    throw err
  }
  const file = await store(
    MERGED_FILE_NAME,
    Buffer.from(saved.bytes.buffer, saved.bytes.byteOffset, saved.bytes.byteLength),
    'application/pdf',
  )
  progress(saved.pageCount, saved.pageCount)
  return { files: [file], extras: { pageCount: saved.pageCount } }
}
