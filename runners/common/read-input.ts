import type { Client } from 'minio'
import { parseS3Url } from '../../contract/storage-client.js'
import { describeUrl, outboundGet } from './outbound-fetch.js'
import { rejected, RunnerError } from './runner-error.js'

export interface SourceOptions {
  storage: Client
  bucket: string
  allowLoopback: boolean
  maxBytes: number
  /** What the file is, for messages ("PDF", "zip archive"). */
  what: string
}

/**
 * Downloads an input file (http(s) with the address policy, or s3:// from dutil's own bucket)
 * into memory, refusing it as soon as it passes `maxBytes`.
 */
export async function downloadInput(url: string, opts: SourceOptions): Promise<Buffer> {
  const s3 = parseS3Url(url)
  let body: AsyncIterable<Buffer>
  let declared: number | undefined
  if (s3) {
    if (s3.bucket !== opts.bucket) {
      throw rejected(`s3:// URLs must point into this service's bucket (s3://${opts.bucket}/...).`)
    }
    try {
      const stat = await opts.storage.statObject(s3.bucket, s3.key)
      declared = stat.size
      body = (await opts.storage.getObject(s3.bucket, s3.key)) as AsyncIterable<Buffer>
    } catch (err) {
      const code = (err as { code?: string }).code
      if (code === 'NotFound' || code === 'NoSuchKey') throw rejected(`No object at ${url}.`, 404)
      throw new RunnerError('upstream_error', 'Reading the input from storage failed.')
    }
  } else {
    const res = await outboundGet(url, { allowLoopback: opts.allowLoopback })
    const len = Number(res.headers['content-length'])
    declared = Number.isFinite(len) ? len : undefined
    body = res.body as AsyncIterable<Buffer>
  }
  const limitMb = Math.round(opts.maxBytes / 1024 / 1024)
  if (declared !== undefined && declared > opts.maxBytes) {
    throw rejected(`The ${opts.what} is larger than the ${limitMb} MB limit.`)
  }
  const chunks: Buffer[] = []
  let total = 0
  try {
    for await (const chunk of body) {
      total += chunk.length
      if (total > opts.maxBytes) throw rejected(`The ${opts.what} is larger than the ${limitMb} MB limit.`)
      chunks.push(chunk)
    }
  } catch (err) {
    if (err instanceof RunnerError) throw err
    throw rejected(`Downloading ${describeUrl(url)} failed while reading it: ${(err as Error).message}`)
  }
  return Buffer.concat(chunks)
}
