import { describe, expect, it } from 'vitest'
import { base32Decode, base32Encode, hotp, matchTotp, newTotpSecret, otpauthUri, timeStep } from './totp.js'

// RFC 6238 Appendix B: the seeds are the ASCII strings below; T0 = 0, X = 30 s, 8 digits.
const SEED_SHA1 = Buffer.from('12345678901234567890')
const SEED_SHA256 = Buffer.from('12345678901234567890123456789012')
const SEED_SHA512 = Buffer.from('1234567890123456789012345678901234567890123456789012345678901234')
const VECTORS: Array<[number, string, string, string]> = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
]

describe('TOTP (RFC 6238)', () => {
  it.each(VECTORS)('matches the RFC vectors at T=%i', (t, sha1, sha256, sha512) => {
    const step = timeStep(t * 1000)
    expect(hotp(SEED_SHA1, step, 8, 'sha1')).toBe(sha1)
    expect(hotp(SEED_SHA256, step, 8, 'sha256')).toBe(sha256)
    expect(hotp(SEED_SHA512, step, 8, 'sha512')).toBe(sha512)
  })

  it('matches RFC 4226 HOTP vectors (6 digits)', () => {
    const expected = [
      '755224',
      '287082',
      '359152',
      '969429',
      '338314',
      '254676',
      '287922',
      '162583',
      '399871',
      '520489',
    ]
    expected.forEach((code, counter) => expect(hotp(SEED_SHA1, counter)).toBe(code))
  })

  it('base32 round-trips and matches RFC 4648 vectors', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI')
    expect(base32Decode('MZXW6YTBOI').toString()).toBe('foobar')
    const secret = newTotpSecret()
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(base32Encode(base32Decode(secret))).toBe(secret)
  })

  it('accepts the current code and one step of drift either way, nothing further', () => {
    const secret = base32Encode(SEED_SHA1)
    const now = 1_700_000_000_000
    const at = (ms: number) => hotp(SEED_SHA1, timeStep(ms))
    expect(matchTotp(secret, at(now), now)).toBe(timeStep(now))
    expect(matchTotp(secret, at(now - 30_000), now)).toBe(timeStep(now) - 1)
    expect(matchTotp(secret, at(now + 30_000), now)).toBe(timeStep(now) + 1)
    expect(matchTotp(secret, at(now - 90_000), now)).toBeNull()
    expect(matchTotp(secret, '12345', now)).toBeNull()
    expect(matchTotp(secret, 'abcdef', now)).toBeNull()
  })

  it('builds the otpauth URI authenticator apps scan', () => {
    expect(otpauthUri('JBSWY3DPEHPK3PXP', 'ada@example.com')).toBe(
      'otpauth://totp/dutil%3Aada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=dutil&algorithm=SHA1&digits=6&period=30',
    )
  })
})
