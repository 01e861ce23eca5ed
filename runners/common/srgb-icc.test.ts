import { describe, expect, it } from 'vitest'
import { srgbProfile, srgbToLinear } from './srgb-icc.js'

describe('srgbProfile', () => {
  it('is an ICC 2.1 display profile from RGB to XYZ whose size, tags and curve hold together', () => {
    const p = srgbProfile()
    expect(p.readUInt32BE(0)).toBe(p.length)
    expect(p.readUInt32BE(8)).toBe(0x02100000)
    expect(p.toString('latin1', 12, 24)).toBe('mntrRGB XYZ ')
    expect(p.toString('latin1', 36, 40)).toBe('acsp')
    const count = p.readUInt32BE(128)
    const tags = new Map<string, [number, number]>()
    for (let i = 0; i < count; i++) {
      const at = 132 + i * 12
      tags.set(p.toString('latin1', at, at + 4), [p.readUInt32BE(at + 4), p.readUInt32BE(at + 8)])
    }
    expect([...tags.keys()].sort()).toEqual(['bTRC', 'bXYZ', 'cprt', 'desc', 'gTRC', 'gXYZ', 'rTRC', 'rXYZ', 'wtpt'])
    for (const [offset, size] of tags.values()) {
      expect(offset % 4).toBe(0)
      expect(offset + size).toBeLessThanOrEqual(p.length)
    }
    // The green primary's Y, as s15Fixed16: 0.7168786.
    const [g] = tags.get('gXYZ')!
    expect(p.toString('latin1', g, g + 4)).toBe('XYZ ')
    expect(p.readInt32BE(g + 12) / 65536).toBeCloseTo(0.7168786, 4)
    // The curve: 1,024 points from 0 to 65535, mid-grey at sRGB's 21.4 %.
    const [c] = tags.get('rTRC')!
    expect(p.readUInt32BE(c + 8)).toBe(1024)
    expect(p.readUInt16BE(c + 12)).toBe(0)
    expect(p.readUInt16BE(c + 12 + 1023 * 2)).toBe(65535)
    expect(srgbToLinear(0.5)).toBeCloseTo(0.214, 3)
    expect(srgbProfile()).toBe(p)
  })
})
