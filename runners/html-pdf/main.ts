import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CHROMIUM, CHROMIUM_ARGS, startChromium } from './chromium.js'

/**
 * The runner's entry: it starts the browser first and only then loads the rest of the program
 * (render.ts: puppeteer, the address guard, storage), a separate chunk of the bundle, so the
 * browser boots while that loads and compiles.
 */
const t0 = Date.now()
/** ms from the process's start to the browser's spawn: Node start-up plus loading this file. */
const spawnedAtMs = Math.round(performance.now())
const profile = mkdtempSync(join(tmpdir(), 'chromium-'))
const chromium = startChromium(CHROMIUM, CHROMIUM_ARGS, profile)
const { renderJob } = await import('./render.js')
/** ms from the process's start to the whole program loaded (the browser boots meanwhile). */
const loadedAtMs = Math.round(performance.now())
await renderJob(chromium, profile, t0, { spawnedAtMs, loadedAtMs })
