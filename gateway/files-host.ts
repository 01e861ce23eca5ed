import http from 'node:http'
import https from 'node:https'
import { pipeline } from 'node:stream/promises'
import type { Logger } from 'pino'

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
  log: Logger
  /** How long storage may take to start answering. */
  timeoutMs?: number
}

/**
 * The files host (`{files_url}`): download links are presigned for this host (the chart sets
 * DUTIL_S3_PUBLIC_ENDPOINT to it) and it hands each GET or HEAD to storage unchanged, the Host
 * header included (it is part of the signature), so storage still checks every link itself.
 * It adds FILES_HOST_HEADERS to every answer, which S3 links cannot carry.
 */
export function filesHostHandler(o: FilesHostOptions): http.RequestListener {
  const target = new URL(o.storage)
  const client = target.protocol === 'https:' ? https : http
  return (req, res) => {
    for (const [k, v] of Object.entries(FILES_HOST_HEADERS)) res.setHeader(k, v)
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' })
      return void res.end('Only GET and HEAD.\n')
    }
    const headers: http.OutgoingHttpHeaders = { host: req.headers.host ?? target.host }
    for (const h of FORWARDED_REQUEST) if (req.headers[h]) headers[h] = req.headers[h]
    const upstream = client.request(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port || undefined,
        method: req.method,
        path: req.url,
        headers,
        timeout: o.timeoutMs ?? 30_000,
      },
      (answer) => {
        const out: http.OutgoingHttpHeaders = {}
        for (const h of FORWARDED_RESPONSE) if (answer.headers[h] !== undefined) out[h] = answer.headers[h]
        res.writeHead(answer.statusCode ?? 502, out)
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
    req.on('close', () => {
      if (!res.writableFinished) upstream.destroy()
    })
    upstream.end()
  }
}
