import http from 'node:http'
import https from 'node:https'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Client } from 'minio'

/** The part an upload of unknown length is cut into (S3's smallest is 5 MiB): what it holds in memory, twice at most. */
export const STREAMED_PART_BYTES = 8 * 1024 * 1024
/** How long the presigned requests of one upload stay valid: longer than any request may take. */
const PRESIGN_SECONDS = 3600

const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) }

export class StreamedPutError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
  ) {
    super(message)
    this.name = 'StreamedPutError'
  }
}

/**
 * Streams bytes into one object, as they come, without holding them: with a known length one PUT
 * whose body is the stream itself; else parts of {@link STREAMED_PART_BYTES}, each held as the
 * chunks that came (one filling while the one before is sent), or one PUT when it all fits in the
 * first part. The requests are presigned by the S3 client (signing is local: no request of its
 * own), so the bytes are neither copied into a buffer of the client's nor hashed for a payload
 * signature, as the client's own putObject does (a 64 MiB buffer per upload, and for an unknown
 * length up to 550 MiB). A failure of the source passes through unchanged; a multipart upload
 * begun is aborted on any failure.
 */
export async function putStreamed(
  client: Client,
  target: { bucket: string; key: string; contentType: string; size?: number },
  body: AsyncIterable<Buffer>,
  partBytes = STREAMED_PART_BYTES,
): Promise<void> {
  const { bucket, key, contentType } = target
  if (target.size !== undefined) {
    const url = await client.presignedUrl('PUT', bucket, key, PRESIGN_SECONDS)
    await put(url, Readable.from(body), { 'content-length': String(target.size), 'content-type': contentType })
    return
  }
  // The part being filled: the body's own chunks, held as they came (no buffer of the part's
  // size is set aside, so a small file costs what it weighs).
  let chunks: Buffer[] = []
  let filled = 0
  let uploadId: string | undefined
  let inFlight: Promise<void> | undefined
  const etags: Array<{ part: number; etag: string }> = []
  const send = async () => {
    if (inFlight) await inFlight
    uploadId ??= await client.initiateNewMultipartUpload(bucket, key, { 'Content-Type': contentType })
    const part = etags.length + 1
    const entry = { part, etag: '' }
    etags.push(entry)
    const url = await client.presignedUrl('PUT', bucket, key, PRESIGN_SECONDS, {
      partNumber: String(part),
      uploadId,
    })
    inFlight = put(url, chunks, { 'content-length': String(filled) }).then((etag) => {
      entry.etag = etag
    })
    inFlight.catch(() => {}) // awaited before the next part or at the end
    chunks = []
    filled = 0
  }
  try {
    for await (const chunk of body) {
      let rest = chunk
      while (filled + rest.length >= partBytes) {
        const n = partBytes - filled
        chunks.push(rest.subarray(0, n))
        filled += n
        rest = rest.subarray(n)
        await send()
      }
      if (rest.length > 0) {
        chunks.push(rest)
        filled += rest.length
      }
    }
    if (!uploadId) {
      const url = await client.presignedUrl('PUT', bucket, key, PRESIGN_SECONDS)
      await put(url, chunks, { 'content-length': String(filled), 'content-type': contentType })
      return
    }
    if (filled > 0) await send()
    await inFlight
    await client.completeMultipartUpload(bucket, key, uploadId, etags)
  } catch (err) {
    await inFlight?.catch(() => {})
    if (uploadId) await client.abortMultipartUpload(bucket, key, uploadId).catch(() => {})
    throw err
  }
}

/** One presigned PUT; the ETag storage answered. */
function put(url: string, body: Buffer[] | Readable, headers: Record<string, string>): Promise<string> {
  const target = new URL(url)
  const mod = target.protocol === 'https:' ? https : http
  return new Promise<string>((resolve, reject) => {
    const req = mod.request(
      target,
      { method: 'PUT', headers, agent: agents[target.protocol as 'http:' | 'https:'] },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          if (text.length < 4096) text += c
        })
        res.on('error', reject)
        res.on('end', () => {
          const status = res.statusCode ?? 0
          if (status === 200) return resolve(String(res.headers.etag ?? '').replace(/"/g, ''))
          const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1]
          reject(new StreamedPutError(`PUT ${target.pathname}: ${status} ${code ?? ''}`.trim(), status, code))
        })
      },
    )
    req.on('error', reject)
    if (Array.isArray(body)) {
      for (const chunk of body) req.write(chunk)
      req.end()
    } else
      pipeline(body, req).catch((err: unknown) => {
        req.destroy()
        reject(err)
      })
  })
}
