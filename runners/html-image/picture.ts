import type { CDPSession, Page, ScreenshotClip } from 'puppeteer-core'
import { TimeoutError } from 'puppeteer-core'
import { outputFileName } from '../common/file-names.js'
import { rejected } from '../common/runner-error.js'
import { loadPage, type PageInput, type PageJob } from '../html-pdf/render.js'
import { drawingFrames, WAIT_FRAME_MS } from './frames.js'
import { DEFAULT_VIEWPORT, type ImageOptionsInput, pictureTooLarge } from './utility.js'
import { pictureViewport, sameViewport } from './viewport.js'

export interface HtmlImageInput extends PageInput {
  imageOptions?: ImageOptionsInput
}

/** How long Chromium may take to encode the picture. */
const PICTURE_MS = 120_000

const CONTENT_TYPES = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const

/**
 * One job in a page of a running browser: the viewport set, the page loaded as html-pdf loads
 * it (loadPage), then the picture of the viewport, the full page, a rectangle or one element,
 * its size checked before Chromium draws it, stored as one file. The browser draws frames only
 * when asked (frames.ts): a page with a wait is drawn at 60 Hz from its load to the wait's end
 * (its animations and animation-frame callbacks run as in any browser), one without none until
 * the picture, which is taken from frames drawn for it.
 */
export const pictureInPage: PageJob<HtmlImageInput> = async (page, ctx, startup) => {
  const { input, store, log } = ctx
  const o = input.imageOptions ?? {}
  const format = o.format ?? 'png'
  const scale = o.deviceScaleFactor ?? 1
  const viewport = { width: o.width ?? DEFAULT_VIEWPORT.width, height: o.height ?? DEFAULT_VIEWPORT.height }
  // Puppeteer opens every page at its default viewport, which is DEFAULT_VIEWPORT: a job of that
  // size starts without resizing its page.
  if (!sameViewport(page.viewport(), viewport.width, viewport.height, scale))
    await page.setViewport(pictureViewport(viewport.width, viewport.height, scale))
  // The session that draws frames is opened once the page has loaded: a second DevTools session
  // open while a navigation moves the page to a renderer of its site loses the media type emulated.
  let frames: CDPSession | undefined
  const session = async () => (frames ??= await page.createCDPSession())
  const loaded = await loadPage(page, ctx, async (wait) => drawingFrames(await session(), wait(), WAIT_FRAME_MS))
  const clip = await regionOf(page, o)
  const size = clip ?? viewport
  const tooLarge = pictureTooLarge(size.width, size.height, scale)
  if (tooLarge) throw rejected(`The page is too large to picture: ${tooLarge}.`)
  let picture: Uint8Array
  try {
    picture = await drawingFrames(
      await session(),
      withTimeout(
        page.screenshot({
          type: format,
          ...(format === 'png' ? {} : { quality: o.quality ?? 80 }),
          omitBackground: o.omitBackground ?? false,
          optimizeForSpeed: o.optimizeForSpeed ?? false,
          ...(clip ? { clip, captureBeyondViewport: true } : { captureBeyondViewport: false }),
        }),
        PICTURE_MS,
      ),
    )
  } catch (err) {
    if (err instanceof TimeoutError) throw rejected(`Taking the picture took longer than ${PICTURE_MS / 1000} s.`)
    throw err
  }
  loaded.checkRefused()
  const width = Math.ceil(size.width * scale)
  const height = Math.ceil(size.height * scale)
  log.info({ ...startup(), ...loaded.stats(), format, width, height, bytes: picture.length }, 'page pictured')
  const file = await store(
    outputFileName(loaded.inputName, format === 'jpeg' ? 'jpg' : format, 'document'),
    Buffer.from(picture.buffer, picture.byteOffset, picture.byteLength),
    CONTENT_TYPES[format],
  )
  return { files: [file], extras: { width, height } }
}

/**
 * The part of the page to picture, in page coordinates (CSS pixels): the whole page as far as its
 * content reaches, the rectangle asked for, or the first element the selector matches; none for
 * the viewport.
 */
async function regionOf(page: Page, o: ImageOptionsInput): Promise<ScreenshotClip | undefined> {
  if (o.clip) return { ...o.clip }
  if (o.fullPage) {
    const { width, height } = (await page.evaluate(
      `({ width: Math.ceil(Math.max(document.documentElement.scrollWidth, window.innerWidth)),
          height: Math.ceil(Math.max(document.documentElement.scrollHeight, window.innerHeight)) })`,
    )) as { width: number; height: number }
    return { x: 0, y: 0, width, height }
  }
  if (o.selector === undefined) return undefined
  const found = (await page.evaluate(
    `(() => {
      let el
      try { el = document.querySelector(${JSON.stringify(o.selector)}) } catch (e) { return { invalid: String(e.message) } }
      if (!el) return { none: true }
      const r = el.getBoundingClientRect()
      return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height }
    })()`,
  )) as { invalid?: string; none?: boolean; x: number; y: number; width: number; height: number }
  const what = JSON.stringify(o.selector.slice(0, 100))
  if (found.invalid !== undefined) throw rejected(`The selector ${what} is not valid: ${found.invalid.slice(0, 200)}`)
  if (found.none) throw rejected(`No element of the page matches the selector ${what}.`)
  if (found.width < 1 || found.height < 1)
    throw rejected(`The element the selector ${what} matches takes no room on the page (it is empty or hidden).`)
  const x = Math.max(0, Math.floor(found.x))
  const y = Math.max(0, Math.floor(found.y))
  return { x, y, width: Math.ceil(found.x + found.width) - x, height: Math.ceil(found.y + found.height) - y }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    work,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new TimeoutError('picture')), ms))),
  ]).finally(() => clearTimeout(timer))
}
