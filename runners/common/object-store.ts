import { createHash, createHmac } from 'node:crypto'
import http from 'node:http'
import https from 'node:https'
import type { Readable } from 'node:stream'
import type { StorageSettings } from '../../contract/storage-keys.js'

/**
 * The few S3 calls a runner makes (read an object, write one, multipart upload), signed with
 * AWS Signature V4, path-style. Runners use this instead of the full S3 SDK the gateway and
 * operator use: the SDK alone costs a runner ~0.4 s of start-up and ~35 MB of resident memory,
 * which matter for short jobs and for zip-files' memory bound.
 */
export interface ObjectStore {
  readonly bucket: string
  getObject(key: string): Promise<{ size: number | undefined; body: Readable }>
  putObject(key: string, body: Buffer, contentType: string): Promise<void>
  initiateMultipart(key: string, contentType: string): Promise<string>
  uploadPart(key: string, uploadId: string, part: number, body: Buffer): Promise<string>
  completeMultipart(key: string, uploadId: string, etags: { part: number; etag: string }[]): Promise<void>
  abortMultipart(key: string, uploadId: string): Promise<void>
  deleteObject(key: string): Promise<void>
}

/** A failed S3 call: `code` is S3's error code (NoSuchKey, AccessDenied, …) when it sent one. */
export class ObjectStoreError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message)
    this.name = 'ObjectStoreError'
  }
}

const EMPTY_SHA256 = createHash('sha256').update('').digest('hex')

/** RFC 3986 encoding as SigV4 wants it (slashes kept in paths). */
export function s3Encode(s: string, keepSlash = false): string {
  const out = encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return keepSlash ? out.replace(/%2F/g, '/') : out
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest()

export interface SignInput {
  method: string
  host: string
  path: string
  query: Record<string, string>
  payloadHash: string
  region: string
  accessKey: string
  secretKey: string
  /** Temporary credentials: signed as x-amz-security-token. */
  sessionToken?: string
  now: Date
}

/** SigV4 headers (x-amz-date, x-amz-content-sha256, authorization) for one request. */
export function signV4(r: SignInput): Record<string, string> {
  const amzDate = r.now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')
  const day = amzDate.slice(0, 8)
  const query = Object.keys(r.query)
    .sort()
    .map((k) => `${s3Encode(k)}=${s3Encode(r.query[k])}`)
    .join('&')
  const token = r.sessionToken ? `x-amz-security-token:${r.sessionToken}\n` : ''
  const headers = `host:${r.host}\nx-amz-content-sha256:${r.payloadHash}\nx-amz-date:${amzDate}\n${token}`
  const signed = r.sessionToken
    ? 'host;x-amz-content-sha256;x-amz-date;x-amz-security-token'
    : 'host;x-amz-content-sha256;x-amz-date'
  const canonical = [r.method, r.path, query, headers, signed, r.payloadHash].join('\n')
  const scope = `${day}/${r.region}/s3/aws4_request`
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n')
  const key = hmac(hmac(hmac(hmac(`AWS4${r.secretKey}`, day), r.region), 's3'), 'aws4_request')
  const signature = createHmac('sha256', key).update(toSign).digest('hex')
  return {
    'x-amz-date': amzDate,
    'x-amz-content-sha256': r.payloadHash,
    ...(r.sessionToken ? { 'x-amz-security-token': r.sessionToken } : {}),
    authorization: `AWS4-HMAC-SHA256 Credential=${r.accessKey}/${scope}, SignedHeaders=${signed}, Signature=${signature}`,
  }
}

const xmlValue = (xml: string, tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)?.[1]

export function s3ObjectStore(s: StorageSettings): ObjectStore {
  const base = new URL(s.endpoint)
  const mod = base.protocol === 'https:' ? https : http
  const agent = new mod.Agent({ keepAlive: true, maxSockets: 8 })
  const basePath = base.pathname.replace(/\/$/, '')

  function call(
    method: string,
    key: string,
    query: Record<string, string>,
    body?: Buffer,
    headers: Record<string, string> = {},
  ): Promise<http.IncomingMessage> {
    const path = `${basePath}/${s3Encode(s.bucket)}/${s3Encode(key, true)}`
    const payloadHash = body ? createHash('sha256').update(body).digest('hex') : EMPTY_SHA256
    const auth = signV4({
      method,
      host: base.host,
      path,
      query,
      payloadHash,
      region: s.region,
      accessKey: s.accessKey,
      secretKey: s.secretKey,
      sessionToken: s.sessionToken,
      now: new Date(),
    })
    const qs = Object.keys(query)
      .map((k) => (query[k] === '' ? s3Encode(k) : `${s3Encode(k)}=${s3Encode(query[k])}`))
      .join('&')
    return new Promise((resolve, reject) => {
      const req = mod.request(
        {
          protocol: base.protocol,
          hostname: base.hostname,
          port: base.port,
          method,
          path: qs ? `${path}?${qs}` : path,
          agent,
          headers: { ...headers, ...auth, ...(body ? { 'content-length': String(body.length) } : {}) },
          timeout: 120_000,
        },
        async (res) => {
          const status = res.statusCode ?? 0
          if (status >= 200 && status < 300) return resolve(res)
          let text = ''
          for await (const c of res) text += c
          reject(
            new ObjectStoreError(
              `${method} ${key}: ${status} ${xmlValue(text, 'Message') ?? ''}`.trim(),
              status,
              xmlValue(text, 'Code'),
            ),
          )
        },
      )
      req.on('timeout', () => req.destroy(new Error(`${method} ${key}: timed out`)))
      req.on('error', reject)
      req.end(body)
    })
  }

  async function text(res: http.IncomingMessage): Promise<string> {
    let t = ''
    for await (const c of res) t += c
    return t
  }

  return {
    bucket: s.bucket,
    async getObject(key) {
      const res = await call('GET', key, {})
      const len = Number(res.headers['content-length'])
      return { size: Number.isFinite(len) ? len : undefined, body: res }
    },
    async putObject(key, body, contentType) {
      ;(await call('PUT', key, {}, body, { 'content-type': contentType })).resume()
    },
    async initiateMultipart(key, contentType) {
      const xml = await text(await call('POST', key, { uploads: '' }, undefined, { 'content-type': contentType }))
      const id = xmlValue(xml, 'UploadId')
      if (!id) throw new ObjectStoreError(`POST ${key}?uploads: no UploadId in the answer`, 200, undefined)
      return id
    },
    async uploadPart(key, uploadId, part, body) {
      const res = await call('PUT', key, { partNumber: String(part), uploadId }, body)
      res.resume()
      return String(res.headers.etag ?? '').replace(/"/g, '')
    },
    async completeMultipart(key, uploadId, etags) {
      const xml = `<CompleteMultipartUpload>${etags.map((e) => `<Part><PartNumber>${e.part}</PartNumber><ETag>"${e.etag}"</ETag></Part>`).join('')}</CompleteMultipartUpload>`
      const answer = await text(
        await call('POST', key, { uploadId }, Buffer.from(xml), { 'content-type': 'application/xml' }),
      )
      // S3 may answer 200 and still report an error in the body.
      if (answer.includes('<Error>'))
        throw new ObjectStoreError(
          `completing ${key}: ${xmlValue(answer, 'Message') ?? 'failed'}`,
          200,
          xmlValue(answer, 'Code'),
        )
    },
    async abortMultipart(key, uploadId) {
      ;(await call('DELETE', key, { uploadId })).resume()
    },
    async deleteObject(key) {
      ;(await call('DELETE', key, {})).resume()
    },
  }
}

/** Reads a small JSON object. */
export async function readJson<T>(store: ObjectStore, key: string): Promise<T> {
  const { body } = await store.getObject(key)
  const chunks: Buffer[] = []
  for await (const c of body) chunks.push(c as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T
}

export async function writeJson(store: ObjectStore, key: string, value: unknown): Promise<void> {
  await store.putObject(key, Buffer.from(JSON.stringify(value)), 'application/json')
}
