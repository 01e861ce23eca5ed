import { randomBytes } from 'node:crypto'
import { crc32, deflateRawSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import yauzl from 'yauzl'
import { dosDateTime, type ZipEntry, zipArchive } from './zip-writer.js'

async function collect(it: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = []
  for await (const c of it) out.push(Buffer.from(c)) // a chunk is only valid until the next one
  return Buffer.concat(out)
}

async function* chunks(data: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let o = 0; o < data.length; o += size) yield data.subarray(o, o + size)
}

/** Every entry of a zip as yauzl (a strict reader: sizes and CRCs checked) reads it. */
function readBack(
  zip: Buffer,
): Promise<Array<{ name: string; method: number; data: Buffer; compressed: number; date: Date }>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true, validateEntrySizes: true }, (err, z) => {
      if (err || !z) return reject(err)
      const out: Array<{ name: string; method: number; data: Buffer; compressed: number; date: Date }> = []
      z.on('error', reject)
      z.on('end', () => resolve(out))
      z.on('entry', (e: yauzl.Entry) => {
        z.openReadStream(e, async (err2, s) => {
          if (err2 || !s) return reject(err2)
          const parts: Buffer[] = []
          for await (const c of s) parts.push(c as Buffer)
          out.push({
            name: e.fileName,
            method: e.compressionMethod,
            data: Buffer.concat(parts),
            compressed: e.compressedSize,
            date: e.getLastModDate(),
          })
          z.readEntry()
        })
      })
      z.readEntry()
    })
  })
}

const text = (n: number) =>
  Buffer.from(Array.from({ length: n }, (_, i) => `line ${i} ${(i * 2654435761) % 1000}\n`).join(''))

describe('zipArchive', () => {
  it('writes entries a strict reader reads back byte for byte: deflated across pieces, stored, empty, UTF-8 names', async () => {
    const big = text(60_000) // ~900 KB: many 64 KB pieces
    const stored = randomBytes(300_000) // stored through the reused piece buffers
    const exact = text(200_000).subarray(0, 4 * 64 * 1024) // ends exactly on a piece boundary
    const entries: ZipEntry[] = [
      { name: 'logs/big.log', date: new Date(2024, 4, 17, 10, 30, 42), store: false, data: chunks(big, 10_000) },
      { name: 'photo.jpg', date: new Date(2024, 0, 1), store: true, data: chunks(Buffer.from('not really a jpeg'), 5) },
      { name: 'empty.txt', date: new Date(2024, 0, 1), store: false, data: chunks(Buffer.alloc(0), 1) },
      { name: 'naïve/résumé.txt', date: new Date(2024, 0, 1), store: false, data: chunks(Buffer.from('ünïcode'), 3) },
      { name: 'scan.png', date: new Date(2024, 0, 1), store: true, data: chunks(stored, 7_000) },
      { name: 'exact.log', date: new Date(2024, 0, 1), store: false, data: chunks(exact, 65_536) },
    ]
    const zip = await collect(zipArchive(entries, { level: 6, pieceBytes: 64 * 1024 }))
    const back = await readBack(zip)
    expect(back.map((e) => [e.name, e.method])).toEqual([
      ['logs/big.log', 8],
      ['photo.jpg', 0],
      ['empty.txt', 8],
      ['naïve/résumé.txt', 8],
      ['scan.png', 0],
      ['exact.log', 8],
    ])
    expect(back[4].data.equals(stored)).toBe(true)
    expect(back[5].data.equals(exact)).toBe(true)
    expect(back[0].data.equals(big)).toBe(true)
    expect(back[0].date).toEqual(new Date(2024, 4, 17, 10, 30, 42))
    expect(back[1].data.toString()).toBe('not really a jpeg')
    expect(back[2].data.length).toBe(0)
    expect(back[3].data.toString()).toBe('ünïcode')
  })

  it('compresses pieces primed with the previous window as well as one pass over the whole entry', async () => {
    const big = text(200_000)
    const zip = await collect(
      zipArchive([{ name: 'a.log', date: new Date(), store: false, data: chunks(big, 65_536) }], {
        level: 6,
        pieceBytes: 128 * 1024,
      }),
    )
    const [entry] = await readBack(zip)
    const onePass = deflateRawSync(big, { level: 6 }).length
    expect(entry.compressed).toBeLessThan(onePass * 1.005)
    expect(crc32(entry.data)).toBe(crc32(big))
  })

  it("passes an entry's data error through unchanged", async () => {
    const boom = new Error('download broke')
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('start')
      throw boom
    }
    await expect(collect(zipArchive([{ name: 'a', date: new Date(), store: false, data: failing() }]))).rejects.toBe(
      boom,
    )
  })

  it('encodes MS-DOS dates, clamping years outside 1980–2107', () => {
    expect(dosDateTime(new Date(1980, 0, 1, 0, 0, 0))).toEqual({ date: (1 << 5) | 1, time: 0 })
    expect(dosDateTime(new Date(2024, 11, 31, 23, 59, 59))).toEqual({
      date: (44 << 9) | (12 << 5) | 31,
      time: (23 << 11) | (59 << 5) | 29,
    })
    expect(dosDateTime(new Date(1970, 5, 1)).date >> 9).toBe(0)
  })
})
