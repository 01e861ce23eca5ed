import type { Browser, BrowserContext, CDPSession, Page } from 'puppeteer-core'

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
