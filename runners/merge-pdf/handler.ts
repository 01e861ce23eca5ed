import { downloadInput, limitText } from '../common/read-input.js'
import type { UtilityHandler } from '../common/run-utility.js'
import { rejected, RunnerError } from '../common/runner-error.js'
import { MERGE_PDF_LIMITS } from './limits.js'
import type { DocumentInfo, Rotation } from './merge.js'
import { mergeInWorker } from './merge-in-worker.js'

interface MergePdfInput {
  files: Array<{ url: string; rotate?: Rotation }>
  info?: DocumentInfo
}

export const MERGED_FILE_NAME = 'merged.pdf'

/** A refusal about one input names it by its place in the request: "files.2: …". */
function aboutInput(index: number, err: unknown): unknown {
  if (!(err instanceof RunnerError) || err.code !== 'upstream_rejected') return err
  return rejected(`files.${index}: ${err.message}`, err.upstreamStatus)
}

/**
 * Downloads the inputs in order, the next one while the worker parses the current, appends each
 * one's pages to the merged document and streams what that added to storage before the next:
 * memory holds two inputs and one upload part at most, never the merged document. Progress
 * counts pages merged (the total is known only at the end).
 */
export const handler: UtilityHandler<MergePdfInput> = async ({ config, input, storage, storeStream, progress }) => {
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
  const merge = await mergeInWorker(MERGE_PDF_LIMITS, MERGE_PDF_LIMITS.workerHeapMb)
  let pageCount = 0
  // Pulled by the upload: the next input is merged once storage has taken the last one's bytes.
  async function* merged(): AsyncGenerator<Uint8Array> {
    let pages = 0
    let bytesInAll = 0
    progress(0, null)
    for (let i = 0; i < input.files.length; i++) {
      const bytes = await next
      if (i + 1 < input.files.length) next = download(i + 1)
      bytesInAll += bytes.length
      if (bytesInAll > MERGE_PDF_LIMITS.maxTotalBytes)
        throw rejected(
          `files.${i}: the PDFs up to this one pass the ${limitText(MERGE_PDF_LIMITS.maxTotalBytes)} limit for all inputs together.`,
        )
      let added: Awaited<ReturnType<typeof merge.add>>
      try {
        added = await merge.add(bytes, input.files[i].rotate)
      } catch (err) {
        throw aboutInput(i, err)
      }
      pages += added.pages
      progress(pages, null)
      yield* added.pieces
    }
    const rest = await merge.finish(input.info)
    pageCount = rest.pageCount
    yield* rest.pieces
  }
  let file: Awaited<ReturnType<typeof storeStream>>
  try {
    file = await storeStream(MERGED_FILE_NAME, merged(), 'application/pdf')
  } catch (err) {
    await merge.abort()
    throw err
  }
  progress(pageCount, pageCount)
  return { files: [file], extras: { pageCount } }
}
