import { execFile } from 'node:child_process'
import { createReadStream, createWriteStream, readFileSync } from 'node:fs'
import { mkdir, open, readFile, rm, stat } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import { promisify } from 'node:util'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomFillSync } from 'node:crypto'
import { KubeConfig } from '@kubernetes/client-node'
import { DIRECT_PART_BYTES } from '../../gateway/direct-uploads.js'
import { ApiKeyAdmin } from '../../platform/api-key-admin.js'
import { storageClient } from '../../platform/storage-client.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'
import { ONE_CALL_HEADER, oneCallRound } from './one-call-rounds.js'
import { percentile } from './percentile.js'
import { cpuSnapshot, type CpuSnapshot, statSeconds } from './cpu-shares.js'

/**
 * `make bench-uploads`: uploads on the local platform, on loopback, side by side in one run.
 *
 * 1. Transfer: the same file (random bytes, on disk) sent five ways, in turns, BENCH_UPLOAD_REPS
 *    times each: a direct PUT to storage (a presigned URL of MinIO itself: the anchor), the same PUT
 *    through a bare TCP relay in this process (what a Node process in the path costs), a multipart
 *    upload straight to storage in the direct upload's parts (what multipart itself costs), through the
 *    gateway (POST /v1/files, streamed to storage), and as a direct upload (announce, PUT its parts
 *    through the files host one after another, which hashes them as they pass, then complete).
 *    Medians; ratios against the direct PUT.
 * 2. Memory: the gateway's resident memory (its /metrics) through BENCH_UPLOAD_CONCURRENT uploads of
 *    BENCH_UPLOAD_CONCURRENT_MB at once through the gateway.
 * 3. One call: a small split-pdf, sync, with the file in the request (multipart) against the same
 *    job from a URL (a file server on loopback), alternating; p50 of each.
 *
 * The client is curl (BENCH_UPLOAD_CLIENT=curl, the default: what the docs show users), each
 * part of a direct upload a file of its own written beforehand; or this process's own streams
 * (BENCH_UPLOAD_CLIENT=node), which cost as much CPU as MinIO and so leave the rest less of the
 * two cores. Beside each transfer rate, where its CPU went: CPU seconds per GB sent, by component
 * (the gateway, which is also the files host; MinIO; the client; the machine in all).
 *
 *   BENCH_UPLOAD_SIZES_MB=10,200,1000  BENCH_UPLOAD_REPS=3  BENCH_UPLOAD_CONCURRENT=10
 *   BENCH_UPLOAD_CONCURRENT_MB=500  BENCH_UPLOAD_CALLS=40  BENCH_UPLOAD_PARTS=transfer,memory,call
 */
const SIZES_MB = (process.env.BENCH_UPLOAD_SIZES_MB ?? '10,200,1000').split(',').map(Number)
const REPS = Number(process.env.BENCH_UPLOAD_REPS ?? 3)
const CONCURRENT = Number(process.env.BENCH_UPLOAD_CONCURRENT ?? 10)
const CONCURRENT_MB = Number(process.env.BENCH_UPLOAD_CONCURRENT_MB ?? 500)
const CALLS = Number(process.env.BENCH_UPLOAD_CALLS ?? 40)
const CLIENT = process.env.BENCH_UPLOAD_CLIENT ?? 'curl'
const PARTS = new Set((process.env.BENCH_UPLOAD_PARTS ?? 'transfer,memory,call').split(','))
const MB = 1024 ** 2
const run = promisify(execFile)
/** The components whose CPU the transfer rows show, as cpuSnapshot names them. */
const CPU_COMPONENTS: Array<[string, string]> = [
  ['host: gateway', 'gateway'],
  ['host: minio', 'MinIO'],
  ['client', 'client'],
  ['machine busy', 'machine'],
]

/** CPU seconds per GB between two snapshots, per CPU_COMPONENTS. */
function cpuPerGb(before: CpuSnapshot, after: CpuSnapshot, mb: number): number[] {
  return CPU_COMPONENTS.map(([k]) => (((after.get(k) ?? 0) - (before.get(k) ?? 0)) * 1024) / mb)
}

/** Writes `mb` MiB of random bytes to a file. */
async function randomFile(path: string, mb: number): Promise<void> {
  const f = await open(path, 'w')
  const block = Buffer.alloc(8 * MB)
  try {
    for (let left = mb * MB; left > 0; left -= block.length) {
      randomFillSync(block)
      await f.write(block, 0, Math.min(block.length, left))
    }
  } finally {
    await f.close()
  }
}

/** CPU seconds of this process and of its reaped children (curl) so far: the client's. */
function clientSeconds(): number {
  return statSeconds(readFileSync('/proc/self/stat', 'utf8'), true)
}

/** The file holding a range of `path`'s bytes, for curl (which sends whole files): `path` itself or a part written beforehand. */
const rangeFiles = new Map<string, string>()
async function rangeFile(path: string, range: { start: number; end: number }): Promise<string> {
  const whole = (await stat(path)).size
  if (range.start === 0 && range.end === whole - 1) return path
  const name = `${path}.${range.start}-${range.end}`
  if (!rangeFiles.has(name)) {
    await pipeline(createReadStream(path, range), createWriteStream(name))
    rangeFiles.set(name, path)
  }
  return name
}

/** One HTTP request of a file's bytes (or a range of them); the answer's status, headers and body. */
type Send = (
  method: string,
  url: string,
  path: string,
  range: { start: number; end: number },
  headers?: Record<string, string>,
) => Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>

/** A Send by curl, as a user sends one. */
const curlSend: Send = async (method, url, path, range, headers = {}) => {
  const file = await rangeFile(path, range)
  const args = ['-sS', '-X', method, '-T', file, '-D', '-', '-o', `${file}.answer`]
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`)
  const { stdout } = await run('curl', [...args, url], { maxBuffer: 1 << 20 })
  const blocks = stdout.trim().split(/\r?\n\r?\n/)
  const lines = blocks[blocks.length - 1].split(/\r?\n/)
  const out: http.IncomingHttpHeaders = {}
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':')
    if (i > 0) out[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim()
  }
  const body = await readFile(`${file}.answer`, 'utf8')
  await rm(`${file}.answer`)
  return { status: Number(lines[0].split(' ')[1]), headers: out, body }
}

/** A Send streamed by this process. */
const nodeSend: Send = (method, url, path, range, headers = {}) =>
  new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, headers: { ...headers, 'content-length': String(range.end - range.start + 1) } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        )
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    createReadStream(path, range).pipe(req)
  })

const send = CLIENT === 'curl' ? curlSend : nodeSend

const platform = await startPlatform({
  dir: join(REPO_ROOT, '.bench'),
  ports: TEST_PORTS,
  fresh: true,
  allowLoopbackUrls: true,
  testHooks: false,
  gatewayEnv: {
    // A 1 GB file through the gateway must arrive within the request time limit.
    DUTIL_REQUEST_TIMEOUT_SECONDS: '600',
    DUTIL_UPLOAD_MAX_BYTES_PER_KEY: String(100 * 1024 ** 3),
  },
})
const work = join(tmpdir(), `dutil-bench-uploads-${process.pid}`)
const fileServer = await new FileServer().start()
const storageAddress = new URL(platform.storage.endpoint)
const relay = net.createServer((socket) => {
  const upstream = net.connect(Number(storageAddress.port), storageAddress.hostname)
  socket.pipe(upstream)
  upstream.pipe(socket)
  socket.on('error', () => upstream.destroy())
  upstream.on('error', () => socket.destroy())
})
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
const relayPort = (relay.address() as net.AddressInfo).port
try {
  await mkdir(work, { recursive: true })
  const kc = new KubeConfig()
  kc.loadFromFile(platform.kubeconfigPath)
  const { key } = await new ApiKeyAdmin(kc, 'dutil').create({
    name: 'bench-uploads',
    utilities: [],
    rateLimitPerMinute: 100_000_000,
  })
  const auth = { Authorization: `Bearer ${key}` }
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${platform.gatewayUrl}${path}`, {
      method,
      headers: { ...auth, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : undefined }
  }
  const s = platform.storage
  const storage = storageClient(s)
  const rss = async () => {
    const text = await (await fetch(`${platform.gatewayUrl}/metrics`)).text()
    return Number(/^process_resident_memory_bytes\s+(\S+)/m.exec(text)![1]) / MB
  }

  // 1. Transfer.
  const methods = {
    async direct(path: string, size: number) {
      const url = await storage.presignedUrl('PUT', s.bucket, `bench/direct-${size}`, 3600)
      const res = await send('PUT', url, path, { start: 0, end: size - 1 })
      if (res.status !== 200) throw new Error(`direct PUT: ${res.status} ${res.body}`)
      await storage.removeObject(s.bucket, `bench/direct-${size}`)
    },
    async gateway(path: string, size: number) {
      const res = await send(
        'POST',
        `${platform.gatewayUrl}/v1/files?name=bench.bin`,
        path,
        { start: 0, end: size - 1 },
        auth,
      )
      if (res.status !== 201) throw new Error(`gateway upload: ${res.status} ${res.body}`)
      return async () => void (await api('DELETE', `/v1/files/${(JSON.parse(res.body) as { id: string }).id}`))
    },
    async relay(path: string, size: number) {
      // The same PUT through a bare TCP relay in this process: what any Node process in the path costs.
      const url = new URL(await storage.presignedUrl('PUT', s.bucket, `bench/relay-${size}`, 3600))
      const signedHost = url.host
      url.port = String(relayPort)
      const res = await send('PUT', url.toString(), path, { start: 0, end: size - 1 }, { Host: signedHost })
      if (res.status !== 200) throw new Error(`relayed PUT: ${res.status} ${res.body}`)
      await storage.removeObject(s.bucket, `bench/relay-${size}`)
    },
    async multipart(path: string, size: number) {
      const key = `bench/multipart-${size}`
      const uploadId = await storage.initiateNewMultipartUpload(s.bucket, key, {})
      const etags = []
      for (let n = 1, start = 0; start < size; n++, start += DIRECT_PART_BYTES) {
        const url = await storage.presignedUrl('PUT', s.bucket, key, 3600, { partNumber: String(n), uploadId })
        const res = await send('PUT', url, path, { start, end: Math.min(size, start + DIRECT_PART_BYTES) - 1 })
        if (res.status !== 200) throw new Error(`multipart part ${n}: ${res.status} ${res.body}`)
        etags.push({ part: n, etag: String(res.headers.etag).replace(/"/g, '') })
      }
      await storage.completeMultipartUpload(s.bucket, key, uploadId, etags)
      await storage.removeObject(s.bucket, key)
    },
    async presigned(path: string, size: number) {
      const offer = await api('POST', `/v1/files?name=bench.bin&size=${size}`)
      if (offer.status !== 201) throw new Error(`announce: ${offer.status} ${JSON.stringify(offer.body)}`)
      const { partSize, parts, completeUrl, id } = offer.body as {
        id: string
        partSize: number
        completeUrl: string
        parts: Array<{ partNumber: number; url: string }>
      }
      const tags = []
      const sent = performance.now()
      for (const p of parts) {
        const start = (p.partNumber - 1) * partSize
        const res = await send('PUT', p.url, path, { start, end: Math.min(size, start + partSize) - 1 })
        if (res.status !== 200) throw new Error(`part ${p.partNumber}: ${res.status} ${res.body}`)
        tags.push({ partNumber: p.partNumber, etag: String(res.headers.etag) })
      }
      partsSeconds.push((performance.now() - sent) / 1000)
      const done = await api('POST', completeUrl, parts.length > 1 ? { parts: tags } : undefined)
      if (done.status !== 200) throw new Error(`complete: ${done.status} ${JSON.stringify(done.body)}`)
      return async () => void (await api('DELETE', `/v1/files/${id}`))
    },
  }
  /** The direct upload's parts alone, without announcing and completing. */
  let partsSeconds: number[] = []
  const transferRows = [
    '| file | direct PUT to storage MB/s | the same through a bare TCP relay (× direct) | multipart straight to storage, 64 MiB parts (× direct) | through the gateway MB/s (× direct) | direct upload, announce to complete MB/s (× direct) | its parts alone through the files host MB/s (× direct) |',
    '|---|---|---|---|---|---|---|',
  ]
  const cpuRows = [
    `| file, way | MB/s | CPU s per GB: ${CPU_COMPONENTS.map(([, name]) => name).join(' / ')} |`,
    '|---|---|---|',
  ]
  for (const mb of PARTS.has('transfer') ? SIZES_MB : []) {
    const path = join(work, `${mb}.bin`)
    await randomFile(path, mb)
    const size = mb * MB
    // curl's parts are files of their own, written before any upload is timed.
    if (CLIENT === 'curl' && size > DIRECT_PART_BYTES)
      for (let start = 0; start < size; start += DIRECT_PART_BYTES)
        await rangeFile(path, { start, end: Math.min(size, start + DIRECT_PART_BYTES) - 1 })
    const seconds: Record<keyof typeof methods, number[]> = {
      direct: [],
      relay: [],
      multipart: [],
      gateway: [],
      presigned: [],
    }
    const cpu: Record<keyof typeof methods, number[][]> = {
      direct: [],
      relay: [],
      multipart: [],
      gateway: [],
      presigned: [],
    }
    partsSeconds = []
    for (let rep = 0; rep < REPS; rep++) {
      // Each rep in another order, so no method always goes first on a cold cache.
      const order = (Object.keys(methods) as Array<keyof typeof methods>).map((_, i, a) => a[(i + rep) % a.length])
      for (const m of order) {
        const cpu0 = cpuSnapshot().set('client', clientSeconds())
        const t0 = performance.now()
        const cleanup = await methods[m](path, size)
        seconds[m].push((performance.now() - t0) / 1000)
        cpu[m].push(cpuPerGb(cpu0, cpuSnapshot().set('client', clientSeconds()), mb))
        if (cleanup) await cleanup()
        // The file written is flushed to disk before the next way starts, so no way pays for the
        // writeback of the one before it.
        await run('sync', [])
      }
    }
    const rate = (m: keyof typeof methods) => mb / percentile(seconds[m], 50)
    const partsRate = mb / percentile(partsSeconds, 50)
    const row = `| ${mb} MB | ${rate('direct').toFixed(0)} | ${rate('relay').toFixed(0)} (${(rate('relay') / rate('direct')).toFixed(2)}×) | ${rate('multipart').toFixed(0)} (${(rate('multipart') / rate('direct')).toFixed(2)}×) | ${rate('gateway').toFixed(0)} (${(rate('gateway') / rate('direct')).toFixed(2)}×) | ${rate('presigned').toFixed(0)} (${(rate('presigned') / rate('direct')).toFixed(2)}×) | ${partsRate.toFixed(0)} (${(partsRate / rate('direct')).toFixed(2)}×) |`
    transferRows.push(row)
    console.log(row)
    for (const m of Object.keys(methods) as Array<keyof typeof methods>) {
      const medians = CPU_COMPONENTS.map((_, i) =>
        percentile(
          cpu[m].map((c) => c[i]),
          50,
        ).toFixed(2),
      )
      cpuRows.push(`| ${mb} MB, ${m} | ${rate(m).toFixed(0)} | ${medians.join(' / ')} |`)
      console.log(cpuRows.at(-1))
    }
    await rm(path)
    for (const [name] of rangeFiles) await rm(name)
    rangeFiles.clear()
  }

  // 2. Memory through concurrent uploads.
  let memoryRow = ''
  if (PARTS.has('memory')) {
    const bigPath = join(work, 'concurrent.bin')
    await randomFile(bigPath, CONCURRENT_MB)
    const before = await rss()
    let peak = before
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rss())
        await new Promise((r) => setTimeout(r, 200))
      }
    })()
    const t0 = performance.now()
    const ids = await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        const res = await send(
          'POST',
          `${platform.gatewayUrl}/v1/files?name=c.bin`,
          bigPath,
          { start: 0, end: CONCURRENT_MB * MB - 1 },
          auth,
        )
        if (res.status !== 201) throw new Error(`concurrent upload: ${res.status} ${res.body}`)
        return (JSON.parse(res.body) as { id: string }).id
      }),
    )
    const concurrentSeconds = (performance.now() - t0) / 1000
    sampling = false
    await sampler
    const after = await rss()
    for (const id of ids) await api('DELETE', `/v1/files/${id}`)
    await rm(bigPath)
    memoryRow = `| ${CONCURRENT} × ${CONCURRENT_MB} MB at once | ${before.toFixed(0)} | ${peak.toFixed(0)} (+${(peak - before).toFixed(0)}) | ${after.toFixed(0)} | ${((CONCURRENT * CONCURRENT_MB) / concurrentSeconds).toFixed(0)} MB/s in all |`
    console.log(memoryRow)
  }

  // 3. One call with the file against the same job from a URL.
  let callRow = ''
  if (PARTS.has('call')) {
    const pdf = await makePdf(2)
    const url = fileServer.add('small.pdf', pdf, 'application/pdf')
    callRow = await oneCallRound(platform.gatewayUrl, key, pdf, url, CALLS, 'split-pdf, 2 pages, sync')
    console.log(callRow)
  }

  console.log(`\n${transferRows.join('\n')}\n\n${cpuRows.join('\n')}`)
  console.log(
    `\n| concurrent uploads through the gateway | gateway RSS before MB | peak MB | after MB | rate |\n|---|---|---|---|---|\n${memoryRow}`,
  )
  console.log(`\n${ONE_CALL_HEADER}\n${callRow}`)
} finally {
  await fileServer.stop()
  relay.close()
  await rm(work, { recursive: true, force: true })
  await platform.stop()
  // Storage keeps what the bench deleted (gigabytes) in its trash until it purges it: not after the bench.
  await rm(join(REPO_ROOT, '.bench', 'minio'), { recursive: true, force: true })
}
