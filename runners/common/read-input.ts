import { createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { AddressAllowance } from '../../contract/address-policy.js'
import { parseS3Url } from '../../contract/storage-keys.js'
import { ObjectStoreError, type ObjectStore } from './object-store.js'
import { describeUrl, outboundGet } from './outbound-fetch.js'
import { rejected, RunnerError } from './runner-error.js'

export interface SourceOptions extends AddressAllowance {
  storage: ObjectStore
  maxBytes: number
  /** What the file is, for messages ("PDF", "zip archive"). */
  what: string
}

export interface InputStream {
  /** Declared size, when the source said. */
  size: number | undefined
  body: AsyncIterable<Buffer>
  /** A name for the file, from the URL's last path segment. */
  name: string
}

/**
 * Opens an input file: http(s) through the address policy, or s3:// from dutil's own bucket.
 * Refuses it at once when its declared size passes `maxBytes`; the body itself is capped too,
 * and read errors become upstream_rejected.
 */
export async function openInput(url: string, opts: SourceOptions): Promise<InputStream> {
  const s3 = parseS3Url(url)
  if (!s3 && url.startsWith('s3://')) throw rejected(`${url.slice(0, 200)} is not a valid s3:// URL.`)
  let body: AsyncIterable<Buffer>
  let declared: number | undefined
  if (s3) {
    if (s3.bucket !== opts.storage.bucket) {
      throw rejected(`s3:// URLs must point into this service's bucket (s3://${opts.storage.bucket}/...).`)
    }
    try {
      const obj = await opts.storage.getObject(s3.key)
      declared = obj.size
      body = obj.body
    } catch (err) {
      if (err instanceof ObjectStoreError && (err.status === 404 || err.code === 'NoSuchKey'))
        throw rejected(`No object at ${url}.`, 404)
      throw new RunnerError('upstream_error', 'Reading the input from storage failed.')
    }
  } else {
    const res = await outboundGet(url, {
      allowLoopback: opts.allowLoopback,
      allowedNetworks: opts.allowedNetworks,
      clusterNetworks: opts.clusterNetworks,
    })
    const len = Number(res.headers['content-length'])
    declared = Number.isFinite(len) ? len : undefined
    body = res.body as AsyncIterable<Buffer>
  }
  const tooBig = () => rejected(`The ${opts.what} is larger than the ${limitText(opts.maxBytes)} limit.`)
  if (declared !== undefined && declared > opts.maxBytes) {
    ;(body as { destroy?: () => void }).destroy?.()
    throw tooBig()
  }
  const name = decodeURIComponent(/[^/]*$/.exec(s3 ? s3.key : new URL(url).pathname)?.[0] ?? '')
  return { size: declared, body: capBytes(body, opts.maxBytes, tooBig, url), name }
}

async function* capBytes(
  body: AsyncIterable<Buffer>,
  max: number,
  tooBig: () => Error,
  url: string,
): AsyncGenerator<Buffer> {
  let total = 0
  try {
    for await (const chunk of body) {
      total += chunk.length
      if (total > max) throw tooBig()
      yield chunk
    }
  } catch (err) {
    if (err instanceof RunnerError) throw err
    throw rejected(`Downloading ${describeUrl(url)} failed while reading it: ${(err as Error).message}`)
  }
}

/** Where {@link withSpooledInput} put the input: its file, the directory around it, its name from the URL. */
export interface SpooledInput {
  path: string
  dir: string
  name: string
}

/**
 * For tools that read a file, not a stream: opens the input (see {@link openInput}), writes it
 * to `fileName` in a directory of its own under `scratchDir`, and hands both to `work`; the
 * directory goes afterwards, whatever happened.
 */
export async function withSpooledInput<T>(
  url: string,
  opts: SourceOptions & { scratchDir: string; fileName: string },
  work: (input: SpooledInput) => Promise<T>,
): Promise<T> {
  const source = await openInput(url, opts)
  const dir = await mkdtemp(join(opts.scratchDir, 'input-'))
  try {
    const path = join(dir, opts.fileName)
    await pipeline(source.body, createWriteStream(path))
    return await work({ path, dir, name: source.name })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Downloads an input file into memory (see {@link openInput}). */
export async function downloadInput(url: string, opts: SourceOptions): Promise<Buffer> {
  return readWhole((await openInput(url, opts)).body)
}

/** An opened input's body read into memory (within the size limit `openInput` puts on it). */
export async function readWhole(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of body) chunks.push(chunk)
  return Buffer.concat(chunks)
}

export function limitText(bytes: number): string {
  return bytes >= 1024 ** 3 && bytes % 1024 ** 3 === 0
    ? `${bytes / 1024 ** 3} GB`
    : `${Math.round(bytes / 1024 ** 2)} MB`
}
