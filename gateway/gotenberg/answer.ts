import { Readable } from 'node:stream'
import type { Context } from 'koa'
import { zipArchive, type ZipEntry } from '../../platform/zip-writer.js'
import type { RouteDeps } from '../routes/context.js'
import { contentDisposition } from '../routes/respond.js'

/** An output of a request, by its storage key, under the name the answer gives it. */
export interface AnswerFile {
  key: string
  /** Its name in the answer, with its extension. */
  name: string
  size: number | null
  contentType: string
}

/**
 * Answers as Gotenberg does: one file as its bytes, several as a zip of them (streamed from
 * storage, one at a time). `Gotenberg-Output-Filename` names the answer (its extension added).
 */
export async function answerFiles(
  ctx: Context,
  deps: Pick<RouteDeps, 'storage' | 'bucket'>,
  files: readonly AnswerFile[],
  outputFilename: string,
): Promise<void> {
  const named = cleanName(outputFilename)
  ctx.status = 200
  ctx.set('X-Content-Type-Options', 'nosniff')
  if (files.length === 1) {
    const [file] = files
    ctx.type = file.contentType
    if (file.size !== null) ctx.length = file.size
    const extension = file.name.slice(file.name.lastIndexOf('.'))
    ctx.set('Content-Disposition', contentDisposition(named ? `${named}${extension}` : file.name))
    ctx.body = await deps.storage.getObject(deps.bucket, file.key)
    return
  }
  ctx.type = 'application/zip'
  ctx.set('Content-Disposition', contentDisposition(`${named || 'files'}.zip`))
  const now = new Date()
  async function* entries(): AsyncGenerator<ZipEntry> {
    for (const f of files) {
      const data = (await deps.storage.getObject(deps.bucket, f.key)) as AsyncIterable<Uint8Array>
      yield { name: f.name, date: now, store: true, data }
    }
  }
  ctx.body = Readable.from(copied(zipArchive(entries(), { level: 0 })))
}

/** The archive's chunks are reused by the writer: each is copied before it is queued for sending. */
async function* copied(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) yield Buffer.from(chunk)
}

/** A caller's name for the answer: its last path segment, no control characters, at most 200 characters. */
export function cleanName(raw: string): string {
  const last = raw.slice(Math.max(raw.lastIndexOf('/'), raw.lastIndexOf('\\')) + 1)
  return last
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .normalize('NFC')
    .slice(0, 200)
}
