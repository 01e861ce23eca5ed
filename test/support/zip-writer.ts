import { crc32, deflateRawSync } from 'node:zlib'

/**
 * A deliberately naive zip writer for hostile fixtures: it writes whatever it is told (unsafe
 * names, symlink attributes, lying sizes, entries sharing one local file), which no archiver
 * library would.
 */
export interface RawEntry {
  name: string | Buffer
  /** The bytes as stored in the archive (already deflated when method is 8). */
  stored: Buffer
  method: 0 | 8
  crc: number
  uncompressedSize: number
  /** Upper 16 bits: Unix mode (e.g. 0o120777 for a symlink). */
  externalAttributes?: number
  /** Host system in the high byte (3 = Unix). */
  versionMadeBy?: number
  flags?: number
  /** Central directory points at this earlier entry's local header instead of a new one. */
  sharesLocalHeaderOf?: number
}

export function fileEntry(name: string | Buffer, data: Buffer, method: 0 | 8 = 8): RawEntry {
  return {
    name,
    stored: method === 8 ? deflateRawSync(data) : data,
    method,
    crc: crc32(data),
    uncompressedSize: data.length,
  }
}

export function writeZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = []
  const central: Buffer[] = []
  const offsets: number[] = []
  let offset = 0
  const nameOf = (e: RawEntry) => (typeof e.name === 'string' ? Buffer.from(e.name, 'utf8') : e.name)
  for (const [i, e] of entries.entries()) {
    const name = nameOf(e)
    const utf8 = typeof e.name === 'string' ? 0x800 : 0
    let localOffset: number
    if (e.sharesLocalHeaderOf !== undefined) {
      localOffset = offsets[e.sharesLocalHeaderOf]
    } else {
      const h = Buffer.alloc(30)
      h.writeUInt32LE(0x04034b50, 0)
      h.writeUInt16LE(20, 4)
      h.writeUInt16LE((e.flags ?? 0) | utf8, 6)
      h.writeUInt16LE(e.method, 8)
      h.writeUInt16LE(0, 10) // time
      h.writeUInt16LE(0x21, 12) // 1980-01-01
      h.writeUInt32LE(e.crc >>> 0, 14)
      h.writeUInt32LE(e.stored.length, 18)
      h.writeUInt32LE(e.uncompressedSize, 22)
      h.writeUInt16LE(name.length, 26)
      h.writeUInt16LE(0, 28)
      localOffset = offset
      locals.push(h, name, e.stored)
      offset += 30 + name.length + e.stored.length
    }
    offsets[i] = localOffset
    const c = Buffer.alloc(46)
    c.writeUInt32LE(0x02014b50, 0)
    c.writeUInt16LE(e.versionMadeBy ?? 20, 4)
    c.writeUInt16LE(20, 6)
    c.writeUInt16LE((e.flags ?? 0) | utf8, 8)
    c.writeUInt16LE(e.method, 10)
    c.writeUInt16LE(0, 12)
    c.writeUInt16LE(0x21, 14)
    c.writeUInt32LE(e.crc >>> 0, 16)
    c.writeUInt32LE(e.stored.length, 20)
    c.writeUInt32LE(e.uncompressedSize, 24)
    c.writeUInt16LE(name.length, 28)
    c.writeUInt32LE((e.externalAttributes ?? 0) >>> 0, 38)
    c.writeUInt32LE(localOffset, 42)
    central.push(c, name)
  }
  const cd = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(cd.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, cd, end])
}
