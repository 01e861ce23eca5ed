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
 * html-pdf in pool mode (docs/adr/0026-runner-pools.md): one browser kept warm between jobs.
 * Each job gets a fresh browser context (its own cookies, storage and cache) with the same
 * request policy as job mode; the browser itself starts afresh for another tenant, after the
 * pool's `restartEvery` jobs, and after a job that crashed or ran out of time.
 */
const log = pino({ base: { component: 'runner', mode: 'pool' } })
const settings = loadPoolSettings()

let chromium: StartedChromium | undefined
let browser: Browser | undefined
let profile: string | undefined

async function stopBrowser(): Promise<void> {
  browser?.disconnect().catch(() => {})
  chromium?.kill()
  await chromium?.exited
  if (profile) await rm(profile, { recursive: true, force: true }).catch(() => {})
  browser = chromium = profile = undefined
}

const worker: PoolWorker = {
  async prepare(fresh) {
    if (!fresh && browser?.connected) return
    await stopBrowser()
    const started = Date.now()
    profile = mkdtempSync(join(tmpdir(), 'chromium-'))
    chromium = startChromium(CHROMIUM, CHROMIUM_ARGS, profile)
    browser = await connectBrowser(chromium)
    log.info({ launchMs: Date.now() - started }, 'browser started')
  },
  run(config) {
    const b = browser!
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
  abort() {
    chromium?.kill()
  },
}

const runner = new PoolRunner(worker, settings, log)
const server = poolServer(runner, settings, log)
await runner.start()
server.listen(settings.port, () =>
  log.info({ port: settings.port, restartEvery: settings.restartEvery }, 'pool runner listening'),
)
process.once('SIGTERM', () => {
  server.close()
  void stopBrowser().then(() => process.exit(0))
})
