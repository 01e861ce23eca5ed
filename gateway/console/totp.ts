import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA1, 30-second steps,
 * 6 digits, which every authenticator app reads from an otpauth:// URI. Small enough to own;
 * tested against the RFC's vectors.
 */
export const TOTP = {
  stepSeconds: 30,
  digits: 6,
  /** steps accepted either side of now (clock drift) */ window: 1,
} as const

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

export function base32Encode(bytes: Buffer): string {
  let bits = 0
  let value = 0
  let out = ''
  for (const b of bytes) {
    value = (value << 8) | b
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31]
  return out
}

export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=-]/g, '').toUpperCase()
  let bits = 0
  let value = 0
  const out: number[] = []
  for (const c of clean) {
    const i = BASE32.indexOf(c)
    if (i < 0) throw new Error('not base32')
    value = (value << 5) | i
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** A new secret: 20 random bytes (160 bits, RFC 4226's recommendation), base32. */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20))
}

/** HOTP value of one counter (RFC 4226 section 5.3). */
export function hotp(
  key: Buffer,
  counter: number,
  digits: number = TOTP.digits,
  algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1',
): string {
  const msg = Buffer.alloc(8)
  msg.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac(algorithm, key).update(msg).digest()
  const offset = mac[mac.length - 1] & 0x0f
  const binary = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3]
  return String(binary % 10 ** digits).padStart(digits, '0')
}

export function timeStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP.stepSeconds)
}

/**
 * The time step a code matches within the drift window, or null. The caller refuses a step
 * that was already used (replay), so each code signs in at most once.
 */
export function matchTotp(secretBase32: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null
  const key = base32Decode(secretBase32)
  const now = timeStep(nowMs)
  for (let d = -TOTP.window; d <= TOTP.window; d++) {
    const expected = Buffer.from(hotp(key, now + d))
    if (timingSafeEqual(expected, Buffer.from(code))) return now + d
  }
  return null
}

/** The otpauth:// URI authenticator apps scan (Key Uri Format). */
export function otpauthUri(secretBase32: string, account: string, issuer = 'dutil'): string {
  const label = encodeURIComponent(`${issuer}:${account}`)
  return `otpauth://totp/${label}?secret=${secretBase32}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${TOTP.digits}&period=${TOTP.stepSeconds}`
}
