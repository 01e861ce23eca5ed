/**
 * Reads one top-level stream out of a Compound File (MS-CFB: the container of a legacy .xls),
 * for xls-to-xlsx's own BIFF8 reader. Only what reading a stream needs: the header, the FAT and
 * its DIFAT chain, the directory, the mini stream. Every chain is bounded by the file's size, so
 * a crafted cycle or a chain out of the file ends in a `CfbError`, never a loop or a huge copy.
 */

/** A Compound File this reader cannot read (malformed, or another layout). */
export class CfbError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CfbError'
  }
}

const MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])
const END_OF_CHAIN = 0xfffffffe
const FREE = 0xffffffff
const NO_STREAM = 0xffffffff
const HEADER_DIFAT = 109
const DIR_ENTRY = 128
const TYPE_STREAM = 2
const TYPE_ROOT = 5

interface Entry {
  name: string
  type: number
  left: number
  right: number
  child: number
  start: number
  size: number
}

/** The named stream in the file's root storage (names compare ignoring case), or null if there is none. */
export function readCfbStream(file: Buffer, name: string): Buffer | null {
  if (file.length < 512 || !file.subarray(0, 8).equals(MAGIC)) throw new CfbError('not a Compound File')
  const shift = file.readUInt16LE(30)
  if (shift !== 9 && shift !== 12) throw new CfbError(`sector shift ${shift}`)
  const sectorSize = 1 << shift
  const miniShift = file.readUInt16LE(32)
  if (miniShift !== 6) throw new CfbError(`mini sector shift ${miniShift}`)
  const miniSize = 1 << miniShift
  const fatSectors = file.readUInt32LE(44)
  const dirStart = file.readUInt32LE(48)
  const miniCutoff = file.readUInt32LE(56)
  const miniFatStart = file.readUInt32LE(60)
  const difatStart = file.readUInt32LE(68)
  const difatSectors = file.readUInt32LE(72)
  // Sectors follow the header, which takes a whole sector (512 or 4096 bytes).
  const sectorCount = Math.floor((file.length - sectorSize) / sectorSize) + (file.length % sectorSize ? 1 : 0)
  const sector = (n: number): Buffer => {
    if (n >= sectorCount) throw new CfbError(`sector ${n} is outside the file`)
    const at = (n + 1) * sectorSize
    return file.subarray(at, Math.min(at + sectorSize, file.length))
  }
  if (fatSectors > sectorCount) throw new CfbError('more FAT sectors than the file holds')

  // The FAT's own sectors: 109 in the header, then DIFAT sectors (each ends with the next one's number).
  const fatAt: number[] = []
  for (let i = 0; i < HEADER_DIFAT && fatAt.length < fatSectors; i++) fatAt.push(file.readUInt32LE(76 + i * 4))
  let difat = difatStart
  for (let seen = 0; fatAt.length < fatSectors; seen++) {
    if (seen >= difatSectors || seen > sectorCount || difat === END_OF_CHAIN || difat === FREE)
      throw new CfbError('the DIFAT chain ends early')
    const s = sector(difat)
    const per = sectorSize / 4 - 1
    for (let i = 0; i < per && fatAt.length < fatSectors; i++) fatAt.push(s.readUInt32LE(i * 4))
    difat = s.readUInt32LE(per * 4)
  }
  const fat = new Uint32Array(fatSectors * (sectorSize / 4))
  fatAt.forEach((n, i) => {
    const s = sector(n)
    for (let j = 0; j * 4 + 4 <= s.length; j++) fat[i * (sectorSize / 4) + j] = s.readUInt32LE(j * 4)
  })

  /** A chain's sector numbers, at most `limit` of them. */
  const chain = (table: Uint32Array, start: number, limit: number): number[] => {
    const out: number[] = []
    for (let n = start; n !== END_OF_CHAIN; n = table[n]) {
      if (n >= table.length || out.length >= limit) throw new CfbError('a sector chain leaves its table or loops')
      out.push(n)
    }
    return out
  }
  /** The bytes of a chain of whole sectors, cut to `size` (or whole if no size is given). */
  const readChain = (start: number, size?: number): Buffer => {
    if (size !== undefined && size > file.length) throw new CfbError('a stream is larger than the file')
    const limit = size === undefined ? sectorCount : Math.ceil(size / sectorSize)
    const parts = start === END_OF_CHAIN ? [] : chain(fat, start, limit).map(sector)
    const whole = Buffer.concat(parts)
    if (size !== undefined && whole.length < size) throw new CfbError('a stream is shorter than its size')
    return size === undefined ? whole : whole.subarray(0, size)
  }

  const dir = readChain(dirStart)
  const entries: Entry[] = []
  for (let at = 0; at + DIR_ENTRY <= dir.length; at += DIR_ENTRY) {
    const nameBytes = Math.min(dir.readUInt16LE(at + 64), 64)
    entries.push({
      name: dir.toString('utf16le', at, at + Math.max(0, nameBytes - 2)),
      type: dir[at + 66],
      left: dir.readUInt32LE(at + 68),
      right: dir.readUInt32LE(at + 72),
      child: dir.readUInt32LE(at + 76),
      start: dir.readUInt32LE(at + 116),
      // Version 3 files keep only the low 32 bits meaningful; larger streams exceed any input we take.
      size:
        shift === 9
          ? dir.readUInt32LE(at + 120)
          : dir.readUInt32LE(at + 124) === 0
            ? dir.readUInt32LE(at + 120)
            : Number.POSITIVE_INFINITY,
    })
  }
  const root = entries[0]
  if (!root || root.type !== TYPE_ROOT) throw new CfbError('no root entry')

  // The root's children form a tree through left and right siblings; walk it, each entry once.
  const wanted = name.toLowerCase()
  let found: Entry | undefined
  const seen = new Set<number>()
  const stack = [root.child]
  while (stack.length) {
    const id = stack.pop()!
    if (id === NO_STREAM || seen.has(id)) continue
    const e = entries[id]
    if (!e) throw new CfbError('a directory entry points outside the directory')
    seen.add(id)
    if (e.type === TYPE_STREAM && e.name.toLowerCase() === wanted) found = e
    stack.push(e.left, e.right)
  }
  if (!found) return null
  if (found.size >= miniCutoff) return readChain(found.start, found.size)

  // A small stream lives in the mini stream (the root entry's data), in 64-byte mini sectors.
  const miniStream = readChain(root.start, root.size)
  const miniFatBytes = readChain(miniFatStart)
  const miniFat = new Uint32Array(miniFatBytes.length / 4)
  for (let i = 0; i < miniFat.length; i++) miniFat[i] = miniFatBytes.readUInt32LE(i * 4)
  const parts =
    found.size === 0
      ? []
      : chain(miniFat, found.start, Math.ceil(found.size / miniSize)).map((n) => {
          if ((n + 1) * miniSize > miniStream.length) throw new CfbError('a mini sector is outside the mini stream')
          return miniStream.subarray(n * miniSize, (n + 1) * miniSize)
        })
  const whole = Buffer.concat(parts)
  if (whole.length < found.size) throw new CfbError('a stream is shorter than its size')
  return whole.subarray(0, found.size)
}
