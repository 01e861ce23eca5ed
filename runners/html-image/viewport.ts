import type { Viewport } from 'puppeteer-core'

/** The viewport a picture is taken in: `width` × `height` CSS pixels at `scale` device pixels each, a desktop page. */
export function pictureViewport(width: number, height: number, scale: number): Viewport {
  return { width, height, deviceScaleFactor: scale, isMobile: false, hasTouch: false, isLandscape: false }
}

/** Whether a page's viewport (Puppeteer's `page.viewport()`) is already the picture's: nothing to resize. */
export function sameViewport(current: Viewport | null, width: number, height: number, scale: number): boolean {
  if (!current) return false
  const want = pictureViewport(width, height, scale)
  return (
    current.width === want.width &&
    current.height === want.height &&
    (current.deviceScaleFactor ?? 1) === want.deviceScaleFactor &&
    !current.isMobile &&
    !current.hasTouch &&
    !current.isLandscape
  )
}
