import { mkdtempSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import type { Browser } from 'puppeteer-core'
import { loadPoolSettings, PoolRunner, poolServer, type PoolWorker } from '../common/pool-server.js'
import { runJob } from '../common/run-utility.js'
import { CHROMIUM, CHROMIUM_ARGS, startChromium, type StartedChromium } from './chromium.js'
import { closePopups, connectBrowser, type HtmlPdfInput, renderInPage } from './render.js'

/**
 * html-pdf in pool mode (docs/adr/0026-runner-pools.md): browsers kept warm between jobs, one
 * per warm slot, each serving one tenant. Each job gets a fresh browser context (its own
 * cookies, storage and cache) with the same request policy as job mode; a browser starts afresh
 * for another tenant, after the pool's `restartEvery` jobs, and after a job that crashed or ran
 * out of time.
 */
const log = pino({ base: { component: 'runner', mode: 'pool' } })
const settings = loadPoolSettings()

/** One browser per warm slot. */
interface Warm {
  chromium: StartedChromium
  browser: Browser
  profile: string
}
const browsers = new Map<number, Warm>()

async function stopBrowser(slot: number): Promise<void> {
  const w = browsers.get(slot)
  if (!w) return
  browsers.delete(slot)
  w.browser.disconnect().catch(() => {})
  w.chromium.kill()
  await w.chromium.exited
  await rm(w.profile, { recursive: true, force: true }).catch(() => {})
}

const worker: PoolWorker = {
  async start(slot) {
    await stopBrowser(slot)
    const started = Date.now()
    const profile = mkdtempSync(join(tmpdir(), 'chromium-'))
    const chromium = startChromium(CHROMIUM, CHROMIUM_ARGS, profile)
    try {
      browsers.set(slot, { chromium, browser: await connectBrowser(chromium), profile })
    } catch (err) {
      chromium.kill()
      await rm(profile, { recursive: true, force: true }).catch(() => {})
      throw err
    }
    log.info({ slot, launchMs: Date.now() - started }, 'browser started')
  },
  run(slot, config) {
    const b = browsers.get(slot)!.browser
    return runJob<HtmlPdfInput>(
      config,
      async (ctx) => {
        const context = await b.createBrowserContext()
        try {
          const page = await context.newPage()
          closePopups(context, page)
          return await renderInPage(page, ctx, () => ({}))
        } finally {
          await context.close().catch(() => {})
        }
      },
      log,
    )
  },
  abort(slot) {
    browsers.get(slot)?.chromium.kill()
  },
}

const runner = new PoolRunner(worker, settings, log)
const server = poolServer(runner, settings, log)
await runner.start()
server.listen(settings.port, () =>
  log.info(
    { port: settings.port, restartEvery: settings.restartEvery, browsers: settings.warmSlots },
    'pool runner listening',
  ),
)
process.once('SIGTERM', () => {
  server.close()
  void Promise.all([...browsers.keys()].map(stopBrowser)).then(() => process.exit(0))
})
