import http from 'node:http'
import https from 'node:https'
import { pipeline } from 'node:stream/promises'
import type { Logger } from 'pino'
import { uploadKeyOwner } from '../contract/storage-inputs.js'
import type { UploadDigests } from './upload-digests.js'

/**
 * Headers every download from the files host carries, whatever the storage behind it sends: a
 * CSP sandbox (a crafted HTML or SVG output opened in a browser runs no script, as an opaque
 * origin with no access to anything), nosniff, and no framing. Outputs are caller-controlled
 * content (unzipped entries, pages html-pdf loaded): this is their boundary.
 */
export const FILES_HOST_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "sandbox; default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'cross-origin',
  'referrer-policy': 'no-referrer',
}

/** Request headers passed to storage: what a download needs (the signature is in the query). */
const FORWARDED_REQUEST = ['range', 'if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'if-range']
/** And what an upload's PUT needs besides. */
const FORWARDED_UPLOAD = ['content-length', 'content-type', 'content-md5', 'expect']
/** Response headers passed back from storage (everything else is dropped, e.g. its own server headers). */
const FORWARDED_RESPONSE = [
  'content-type',
  'content-length',
  'content-disposition',
  'content-range',
  'accept-ranges',
  'etag',
  'last-modified',
  'cache-control',
  'expires',
  'content-encoding',
  'content-language',
]

export interface FilesHostOptions {
  /** The storage endpoint the gateway reaches (DUTIL_S3_ENDPOINT). */
  storage: string
  /** The endpoint download links are presigned for (DUTIL_S3_PUBLIC_ENDPOINT): its Host is signed. */
  publicEndpoint: string
  /** The bucket of the outputs: nothing else is served. */
  bucket: string
  log: Logger
  /** How long storage may take to start answering. */
  timeoutMs?: number
  /** Hashes direct uploads' bytes as they pass (their completion then needs no read-back). */
  digests?: UploadDigests
}

/** The storage key, part number and multipart upload id of an upload's presigned PUT (isPresignedRequest passed). */
export function uploadPutOf(url: string): { key: string; partNumber: number; uploadId?: string } | undefined {
  const q = url.indexOf('?')
  const query = new URLSearchParams(url.slice(q + 1))
  const key = url.slice(0, q).split('/').slice(2).map(decodeURIComponent).join('/')
  const part = query.get('partNumber')
  const uploadId = query.get('uploadId')
  if (part === null && uploadId === null) return { key, partNumber: 1 }
  const partNumber = Number(part)
  if (!uploadId || !Number.isInteger(partNumber) || partNumber < 1) return undefined
  return { key, partNumber, uploadId }
}

/** The query parameters of an S3 presigned (signature version 4) link. */
const PRESIGNED_PARAMS = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Signature']

/**
 * Whether a request is one the files host serves (pure): GET or HEAD of an object under the
 * bucket, or PUT of an upload (`uploads/…`: a direct upload's file or one of its parts), by a
 * presigned link (its signature is checked by storage). Everything else (storage's own endpoints
 * such as /minio/health/live, bucket listings, other buckets, other methods, a PUT anywhere else,
 * unsigned requests, paths with dot segments or encoded slashes) is refused before storage sees it.
 */
export function isPresignedRequest(method: string | undefined, url: string | undefined, bucket: string): boolean {
  if (method !== 'GET' && method !== 'HEAD' && method !== 'PUT') return false
  if (!url || url.length > 8192 || !url.startsWith('/')) return false
  const q = url.indexOf('?')
  if (q < 0) return false
  const path = url.slice(0, q)
  const query = new URLSearchParams(url.slice(q + 1))
  if (!PRESIGNED_PARAMS.every((p) => query.getAll(p).length === 1)) return false
  const segments = path.split('/').slice(1)
  if (segments.length < 2 || segments[0] !== bucket) return false
  const key: string[] = []
  for (const s of segments.slice(1)) {
    if (s === '' || /%2f|%5c|\\/i.test(s)) return false
    let decoded: string
    try {
      decoded = decodeURIComponent(s)
    } catch {
      return false
    }
    if (decoded === '.' || decoded === '..') return false
    key.push(decoded)
  }
  // A PUT is an upload's: uploads/<tenant code>/<day>/<file_id>/<name> (or one stored before codes).
  return method !== 'PUT' || uploadKeyOwner(key.join('/')) !== null
}

/**
 * The files host (`{files_url}`): download links and direct uploads' links are presigned for the
 * public endpoint (the chart sets DUTIL_S3_PUBLIC_ENDPOINT to this host). It serves only presigned
 * GET and HEAD requests for objects of the bucket and PUTs of uploads (isPresignedRequest;
 * anything else is 404 in the API's envelope), streaming bodies both ways, and
 * hands each to storage with the Host the links are signed for, never the caller's, and with
 * storage's own TLS server name; storage still checks every signature itself. It adds
 * FILES_HOST_HEADERS to every answer, which S3 links cannot carry.
 */
export function filesHostHandler(o: FilesHostOptions): http.RequestListener {
  const target = new URL(o.storage)
  const signedHost = new URL(o.publicEndpoint).host
  const client = target.protocol === 'https:' ? https : http
  return (req, res) => {
    for (const [k, v] of Object.entries(FILES_HOST_HEADERS)) res.setHeader(k, v)
    if (!isPresignedRequest(req.method, req.url, o.bucket)) {
      const body = JSON.stringify({
        error: {
          code: 'not_found',
          message: 'The files host serves only download links of job results and upload links of direct uploads.',
        },
      })
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
      return void res.end(req.method === 'HEAD' ? undefined : body)
    }
    const headers: http.OutgoingHttpHeaders = { host: signedHost }
    const upload = req.method === 'PUT'
    const put = upload && o.digests ? uploadPutOf(req.url!) : undefined
    const tap = put ? o.digests!.begin(put.key, put.partNumber, put.uploadId) : undefined
    for (const h of upload ? FORWARDED_UPLOAD : FORWARDED_REQUEST) if (req.headers[h]) headers[h] = req.headers[h]
    // A PUT without a declared length is sent on as it comes (storage refuses what it cannot take).
    if (upload && !req.headers['content-length']) headers['transfer-encoding'] = 'chunked'
    const upstream = client.request(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port || undefined,
        method: req.method,
        path: req.url,
        headers,
        // Node would take the TLS server name from the Host header: storage's own, always.
        ...(target.protocol === 'https:' ? { servername: target.hostname } : {}),
        timeout: o.timeoutMs ?? 30_000,
      },
      (answer) => {
        const status = answer.statusCode ?? 502
        if (tap && status >= 200 && status < 300 && typeof answer.headers.etag === 'string')
          tap.stored(answer.headers.etag, Number(req.headers['content-length'] ?? NaN))
        const out: http.OutgoingHttpHeaders = {}
        for (const h of FORWARDED_RESPONSE) if (answer.headers[h] !== undefined) out[h] = answer.headers[h]
        res.writeHead(status, out)
        pipeline(answer, res).catch(() => res.destroy())
      },
    )
    upstream.on('timeout', () => upstream.destroy(new Error('storage did not answer in time')))
    upstream.on('error', (err) => {
      o.log.warn({ err: err.message, path: req.url?.split('?')[0] }, 'files host: storage unreachable')
      if (res.headersSent) return void res.destroy()
      res.writeHead(502, { 'content-type': 'text/plain' })
      res.end('Storage is unreachable; try again shortly.\n')
    })
    // A client that goes away mid-answer (or mid-upload) ends the request to storage too. (The
    // request's own close comes once its body is read, which for an upload is before the answer.)
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy()
    })
    if (tap) req.on('data', (chunk: Buffer) => tap.update(chunk))
    if (upload) pipeline(req, upstream).catch(() => upstream.destroy())
    else upstream.end()
  }
}
