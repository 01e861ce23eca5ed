import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { inject } from 'vitest'

/**
 * Debian's Chromium driven by playwright-core. The flags keep it from reaching out to the
 * network (this machine has none) and let it run as root in a container.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.DUTIL_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  })
}

/** Each person's last failed answers (4xx, 5xx), for the message of a step that did not arrive. */
const failedAnswers = new WeakMap<BrowserContext, string[]>()

/** A fresh browser profile (its own cookies): one per person. The test IdP's certificate is from the test CA. */
export async function personContext(
  browser: Browser,
  viewport = { width: 1280, height: 860 },
): Promise<BrowserContext> {
  const ctx = await browser.newContext({
    viewport,
    ignoreHTTPSErrors: true,
    baseURL: inject('gatewayUrl'),
    reducedMotion: 'reduce',
  })
  ctx.setDefaultTimeout(15_000)
  const answers: string[] = []
  failedAnswers.set(ctx, answers)
  ctx.on('response', (r) => {
    if (r.status() < 400) return
    answers.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`)
    if (answers.length > 10) answers.shift()
  })
  return ctx
}

/**
 * Waits for the page's heading. When it does not come, the error says where the page is, what it
 * shows and the requests that failed on the way (what a CI log needs to tell why), and a
 * screenshot of it is kept.
 */
export async function waitForHeading(page: Page, name: string): Promise<void> {
  try {
    await page.getByRole('heading', { name, exact: true }).waitFor()
  } catch (err) {
    const text = await page
      .evaluate('document.body ? document.body.innerText : ""')
      .then((t) => String(t).replace(/\s+/g, ' ').slice(0, 400))
      .catch((e: unknown) => `(unreadable: ${String(e)})`)
    const shot = await screenshot(page, `no-heading-${name.toLowerCase()}-${Date.now()}`).catch(() => '(none)')
    const failed = failedAnswers.get(page.context()) ?? []
    throw new Error(
      `no heading "${name}" on ${page.url()}: the page shows "${text}"; failed requests: ${failed.join(', ') || 'none'}; screenshot ${shot}`,
      { cause: err },
    )
  }
}

export const ARTIFACTS = join(inject('platformDir'), 'artifacts', 'screenshots')

/** Saves a screenshot of the page as a test artefact (.test/artifacts/screenshots/<name>.png). */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true })
  const path = join(ARTIFACTS, `${name}.png`)
  await page.screenshot({ path, fullPage })
  return path
}

/** Form controls on the page with no accessible label (every control should have one). Runs in the page. */
export async function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('input:not([type=hidden]):not([hidden]), select, textarea')]
    .filter((el) => !el.labels?.length && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
    .map((el) => el.outerHTML.slice(0, 120))`)
}

/** Whether the page scrolls sideways (it should not, on any viewport; wide tables scroll inside their own box). */
export async function overflowsSideways(page: Page): Promise<boolean> {
  return page.evaluate('document.documentElement.scrollWidth > window.innerWidth + 1')
}
