import { mkdtempSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'puppeteer-core'
import { servePool } from '../common/pool-server.js'
import { runJob } from '../common/run-utility.js'
import { CHROMIUM, CHROMIUM_ARGS, startChromium, type StartedChromium } from './chromium.js'
import { closePopups, connectBrowser, type PageInput, type PageJob } from './render.js'

/** A job's fresh browser context and its page, opened before the job comes. */
interface Spare {
  context: BrowserContext
  page: Page
}

/**
 * A browser utility in pool mode (docs/adr/0026-runner-pools.md): one browser kept warm for the
 * pod's life, which serves one tenant. Each job gets a fresh browser context (its own cookies,
 * storage and cache) with the same request policy as job mode, and `inPage` does its work there,
 * in a page `openPage` opens in that context. The next job's context and page are opened while
 * the pod waits for it (after the browser starts, and once a job's outcome was read), never used
 * by more than one job: a job starts with its page ready.
 */
export async function serveBrowserPool<I extends PageInput>(
  inPage: PageJob<I>,
  args: readonly string[] = CHROMIUM_ARGS,
  openPage: (browser: Browser, context: BrowserContext) => Promise<Page> = (_, context) => context.newPage(),
): Promise<void> {
  let warm: { chromium: StartedChromium; browser: Browser; profile: string } | undefined
  let spare: Promise<Spare> | undefined

  /** A fresh context and its page; settles rejected (and leaves nothing open) if either fails. */
  function open(b: Browser): Promise<Spare> {
    const opening = (async () => {
      const context = await b.createBrowserContext()
      try {
        return { context, page: await openPage(b, context) }
      } catch (err) {
        await context.close().catch(() => {})
        throw err
      }
    })()
    opening.catch(() => {}) // a spare that failed is opened again by the job that takes it
    return opening
  }

  async function stopBrowser(): Promise<void> {
    const w = warm
    if (!w) return
    warm = undefined
    w.browser.disconnect().catch(() => {})
    w.chromium.kill()
    await w.chromium.exited
    await rm(w.profile, { recursive: true, force: true }).catch(() => {})
  }

  await servePool(
    (log) => ({
      async start() {
        const started = Date.now()
        const profile = mkdtempSync(join(tmpdir(), 'chromium-'))
        const chromium = startChromium(CHROMIUM, args, profile)
        try {
          warm = { chromium, browser: await connectBrowser(chromium), profile }
          spare = open(warm.browser)
        } catch (err) {
          chromium.kill()
          await rm(profile, { recursive: true, force: true }).catch(() => {})
          throw err
        }
        log.info({ launchMs: Date.now() - started }, 'browser started')
      },
      run(config) {
        const b = warm!.browser
        const ready = spare
        spare = undefined
        return runJob<I>(
          config,
          async (ctx) => {
            const { context, page } = await (ready ?? open(b)).catch(() => open(b))
            try {
              closePopups(context, page)
              return await inPage(page, ctx, () => ({}))
            } finally {
              await context.close().catch(() => {})
            }
          },
          log,
        )
      },
      abort() {
        warm?.chromium.kill()
      },
      between() {
        if (warm && !spare) spare = open(warm.browser)
      },
      kept() {
        return warm?.chromium.child.pid ? [warm.chromium.child.pid] : []
      },
    }),
    stopBrowser,
  )
}
