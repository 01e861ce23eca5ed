import { inflateSync } from 'node:zlib'

/** A picture's pixel size, read from its header: PNG, JPEG (its first frame) or WebP. */
export function pictureSize(bytes: Buffer): { format: 'png' | 'jpeg' | 'webp'; width: number; height: number } {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return { format: 'png', width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    for (let at = 2; at + 9 < bytes.length;) {
      if (bytes[at] !== 0xff) throw new Error(`not a JPEG marker at ${at}`)
      const marker = bytes[at + 1]
      // Start of frame (baseline, progressive …): its height then width.
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
        return { format: 'jpeg', height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) }
      at += 2 + bytes.readUInt16BE(at + 2)
    }
    throw new Error('a JPEG without a frame')
  }
  if (bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') {
    const chunk = bytes.toString('latin1', 12, 16)
    if (chunk === 'VP8X')
      return { format: 'webp', width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 }
    if (chunk === 'VP8L') {
      const bits = bytes.readUInt32LE(21)
      return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 }
    }
    if (chunk === 'VP8 ')
      return { format: 'webp', width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff }
  }
  throw new Error(`not a PNG, JPEG or WebP picture (${bytes.subarray(0, 12).toString('hex')})`)
}

/**
 * A PNG's pixels (8-bit RGB or RGBA, not interlaced: what Chromium writes), as RGBA: enough to
 * check what a picture shows where.
 */
export function decodePng(bytes: Buffer): { width: number; height: number; rgba(x: number, y: number): number[] } {
  const { width, height } = pictureSize(bytes)
  const depth = bytes[24]
  const colour = bytes[25]
  if (depth !== 8 || (colour !== 2 && colour !== 6) || bytes[28] !== 0)
    throw new Error(`PNG of depth ${depth}, colour type ${colour}, interlace ${bytes[28]}: not read here`)
  const channels = colour === 6 ? 4 : 3
  const idat: Buffer[] = []
  for (let at = 8; at < bytes.length;) {
    const length = bytes.readUInt32BE(at)
    const type = bytes.toString('latin1', at + 4, at + 8)
    if (type === 'IDAT') idat.push(bytes.subarray(at + 8, at + 8 + length))
    at += 12 + length
  }
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * channels
  const out = Buffer.alloc(height * stride)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[y * stride + i - channels] : 0
      const b = y > 0 ? out[(y - 1) * stride + i] : 0
      const c = y > 0 && i >= channels ? out[(y - 1) * stride + i - channels] : 0
      const p = a + b - c
      const pa = Math.abs(p - a)
      const pb = Math.abs(p - b)
      const pc = Math.abs(p - c)
      const predictor = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter]
      if (predictor === undefined) throw new Error(`PNG filter ${filter}`)
      out[y * stride + i] = (line[i] + predictor) & 0xff
    }
  }
  return {
    width,
    height,
    rgba(x, y) {
      const at = y * stride + x * channels
      return channels === 4 ? [...out.subarray(at, at + 4)] : [...out.subarray(at, at + 3), 255]
    },
  }
}
