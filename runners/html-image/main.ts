import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CHROMIUM, CHROMIUM_ARGS, PICTURE_ARGS, startChromium } from '../html-pdf/chromium.js'

/**
 * The runner's entry (as html-pdf's): the browser starts first, the rest of the program (picture.ts:
 * puppeteer, the address guard, storage) loads while it boots.
 */
const t0 = Date.now()
const spawnedAtMs = Math.round(performance.now())
const profile = mkdtempSync(join(tmpdir(), 'chromium-'))
const chromium = startChromium(CHROMIUM, [...CHROMIUM_ARGS, ...PICTURE_ARGS], profile)
const [{ renderJob }, { pictureInPage }] = await Promise.all([import('../html-pdf/render.js'), import('./picture.js')])
const loadedAtMs = Math.round(performance.now())
await renderJob(chromium, profile, t0, { spawnedAtMs, loadedAtMs }, pictureInPage)
