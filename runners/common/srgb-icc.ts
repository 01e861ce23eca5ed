/**
 * An sRGB ICC profile (version 2.1, a display profile from RGB to XYZ), written from the sRGB
 * standard's own numbers (IEC 61966-2-1): its primaries adapted to the D50 connection space
 * (Bradford), its tone curve sampled at 1,024 points. A PDF/A document whose colours are device
 * RGB names such a profile as its output intent; one written here spares a runner image a
 * package only for its 3 KB. Built once per process.
 */

const D50 = [0.9642, 1.0, 0.8249]
/** sRGB's red, green and blue primaries in XYZ, adapted to D50. */
const PRIMARIES = {
  rXYZ: [0.4360747, 0.2225045, 0.0139322],
  gXYZ: [0.3850649, 0.7168786, 0.0971045],
  bXYZ: [0.1430804, 0.0606169, 0.7141733],
}
const CURVE_POINTS = 1024

const s15Fixed16 = (v: number) => {
  const b = Buffer.alloc(4)
  b.writeInt32BE(Math.round(v * 65536))
  return b
}
const signature = (s: string) => Buffer.from(s, 'latin1')
const pad4 = (b: Buffer) => (b.length % 4 ? Buffer.concat([b, Buffer.alloc(4 - (b.length % 4))]) : b)

function xyzTag(xyz: number[]): Buffer {
  return Buffer.concat([signature('XYZ '), Buffer.alloc(4), ...xyz.map(s15Fixed16)])
}

/** sRGB's tone curve (its inverse companding), 0–1 in, 0–65535 out. */
export function srgbToLinear(v: number): number {
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
}

function curveTag(): Buffer {
  const b = Buffer.alloc(12 + CURVE_POINTS * 2)
  signature('curv').copy(b, 0)
  b.writeUInt32BE(CURVE_POINTS, 8)
  for (let i = 0; i < CURVE_POINTS; i++)
    b.writeUInt16BE(Math.round(srgbToLinear(i / (CURVE_POINTS - 1)) * 65535), 12 + i * 2)
  return b
}

/** ICC v2's textDescriptionType: the ASCII text, no Unicode or ScriptCode text. */
function descriptionTag(text: string): Buffer {
  const ascii = Buffer.from(text + '\0', 'latin1')
  const head = Buffer.alloc(12)
  signature('desc').copy(head, 0)
  head.writeUInt32BE(ascii.length, 8)
  // Unicode language code and count (0, 0), ScriptCode code and count (0, 0) and its 67 bytes.
  return Buffer.concat([head, ascii, Buffer.alloc(4 + 4 + 2 + 1 + 67)])
}

function textTag(text: string): Buffer {
  return Buffer.concat([signature('text'), Buffer.alloc(4), Buffer.from(text + '\0', 'latin1')])
}

let built: Buffer | undefined

/** The profile's bytes. */
export function srgbProfile(): Buffer {
  if (built) return built
  const curve = curveTag()
  const tags: Array<[string, Buffer]> = [
    ['desc', descriptionTag('sRGB IEC61966-2.1 (dutil)')],
    ['cprt', textTag('No copyright: written from the numbers of IEC 61966-2-1')],
    ['wtpt', xyzTag(D50)],
    ['rXYZ', xyzTag(PRIMARIES.rXYZ)],
    ['gXYZ', xyzTag(PRIMARIES.gXYZ)],
    ['bXYZ', xyzTag(PRIMARIES.bXYZ)],
    ['rTRC', curve],
    ['gTRC', curve],
    ['bTRC', curve],
  ]
  const tableBytes = 4 + tags.length * 12
  let offset = 128 + tableBytes
  const table = Buffer.alloc(tableBytes)
  table.writeUInt32BE(tags.length, 0)
  const data: Buffer[] = []
  const placed = new Map<Buffer, number>()
  tags.forEach(([sig, body], i) => {
    let at = placed.get(body)
    if (at === undefined) {
      at = offset
      placed.set(body, at)
      const padded = pad4(body)
      data.push(padded)
      offset += padded.length
    }
    signature(sig).copy(table, 4 + i * 12)
    table.writeUInt32BE(at, 8 + i * 12)
    table.writeUInt32BE(body.length, 12 + i * 12)
  })
  const header = Buffer.alloc(128)
  header.writeUInt32BE(offset, 0)
  header.writeUInt32BE(0x02100000, 8)
  signature('mntr').copy(header, 12)
  signature('RGB ').copy(header, 16)
  signature('XYZ ').copy(header, 20)
  // A fixed date (the profile does not change): 2026-01-01 00:00:00.
  header.writeUInt16BE(2026, 24)
  header.writeUInt16BE(1, 26)
  header.writeUInt16BE(1, 28)
  signature('acsp').copy(header, 36)
  // Rendering intent 0 (perceptual); the connection space's illuminant, D50.
  D50.map(s15Fixed16).forEach((b, i) => b.copy(header, 68 + i * 4))
  built = Buffer.concat([header, table, ...data])
  return built
}
