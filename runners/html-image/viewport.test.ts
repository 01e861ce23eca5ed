import { describe, expect, it } from 'vitest'
import { pictureViewport, sameViewport } from './viewport.js'

describe('the picture viewport', () => {
  it('is a desktop viewport of the size and scale asked for', () => {
    expect(pictureViewport(800, 600, 2)).toEqual({
      width: 800,
      height: 600,
      deviceScaleFactor: 2,
      isMobile: false,
      hasTouch: false,
      isLandscape: false,
    })
  })

  it('is the page’s already only when size, scale and desktop emulation all match', () => {
    const set = pictureViewport(800, 600, 1)
    expect(sameViewport(set, 800, 600, 1)).toBe(true)
    expect(sameViewport({ width: 800, height: 600 }, 800, 600, 1)).toBe(true)
    expect(sameViewport(null, 800, 600, 1)).toBe(false)
    expect(sameViewport(set, 801, 600, 1)).toBe(false)
    expect(sameViewport(set, 800, 601, 1)).toBe(false)
    expect(sameViewport(set, 800, 600, 2)).toBe(false)
    expect(sameViewport({ ...set, isMobile: true }, 800, 600, 1)).toBe(false)
    expect(sameViewport({ ...set, hasTouch: true }, 800, 600, 1)).toBe(false)
    expect(sameViewport({ ...set, isLandscape: true }, 800, 600, 1)).toBe(false)
  })
})
