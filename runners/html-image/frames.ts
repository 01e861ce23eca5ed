import type { Browser, BrowserContext, CDPSession, Page } from 'puppeteer-core'
import type { Protocol } from 'puppeteer-core'

/**
 * html-image's browser draws a page's frames only when it is asked to (PICTURE_ARGS: Chromium's
 * begin-frame control, docs/adr/0047-pictures-drawn-on-demand.md). A page then loads without
 * rasterising frames nobody looks at, and its picture is taken from a frame drawn for it. Every
 * page of such a browser is opened with the control on: the browser's first page has it, and
 * openPicturePage opens the pages of a pool's contexts.
 */
export async function openPicturePage(browser: Browser, context: BrowserContext): Promise<Page> {
  const session = await browser.target().createCDPSession()
  try {
    await session.send('Target.createTarget', {
      url: 'about:blank',
      browserContextId: context.id,
      enableBeginFrameControl: true,
    })
    // The context is the job's own and new: its first page is the one just opened.
    const target = await context.waitForTarget((t) => t.type() === 'page', { timeout: 10_000 })
    const page = await target.page()
    if (!page) throw new Error('the picture page has no page')
    return page
  } finally {
    await session.detach().catch(() => {})
  }
}

/** How often a waiting page is drawn: the 60 Hz a browser draws at on its own. */
export const WAIT_FRAME_MS = 16

/**
 * `work`, with the page's frames drawn until it settles: one after another (`intervalMs` 0: what
 * a picture waits for, a frame or two) or at most one every `intervalMs` (a page given time to
 * settle, whose animation frames and timers run as in any browser). A frame the browser cannot
 * draw (the page closed, its context gone) ends the drawing, never the work.
 */
export async function drawingFrames<T>(frames: CDPSession, work: Promise<T>, intervalMs = 0): Promise<T> {
  let settled = false
  const done = work.finally(() => {
    settled = true
  })
  const draw = async () => {
    while (!settled) {
      const began = Date.now()
      try {
        await frames.send('HeadlessExperimental.beginFrame', {})
      } catch {
        return
      }
      const rest = intervalMs - (Date.now() - began)
      if (rest > 0 && !settled) await new Promise((r) => setTimeout(r, rest))
    }
  }
  void draw()
  return done
}

/**
 * The page's own DevTools session, which Puppeteer keeps (its CdpPage's `_client`): frames drawn
 * through it need no second session, whose opening cost a small page's picture some 5 ms
 * (docs/benchmarks.md). A Puppeteer that no longer keeps it there gives a session of its own.
 */
export async function pageSession(page: Page): Promise<CDPSession> {
  const own = (page as unknown as { _client?: () => CDPSession })._client?.()
  return own ?? (await page.createCDPSession())
}

/** Attempts at a frame with the picture in it before giving up (one is the rule). */
const FRAME_ATTEMPTS = 5

/**
 * The viewport's picture, taken in the frame drawn for it: one DevTools call, where a screenshot
 * waits for a frame drawn beside it (the picture is the same, byte for byte). Chromium captures
 * the view as drawn, at the window's scale: a picture at another device scale, or of a region
 * beyond the viewport, is the screenshot's. A frame with nothing new to draw carries no picture
 * (a browser's first page can draw one): the next is asked for.
 */
export async function viewportPicture(
  frames: CDPSession,
  screenshot: Protocol.HeadlessExperimental.ScreenshotParams,
): Promise<Buffer> {
  for (let i = 0; i < FRAME_ATTEMPTS; i++) {
    const { screenshotData } = await frames.send('HeadlessExperimental.beginFrame', { screenshot })
    if (screenshotData) return Buffer.from(screenshotData, 'base64')
  }
  throw new Error(`the browser drew no picture in ${FRAME_ATTEMPTS} frames`)
}
