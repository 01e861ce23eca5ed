import { serveBrowserPool } from './browser-pool.js'
import { renderInPage } from './render.js'

/** html-pdf in pool mode: a warm browser, a fresh context per job (browser-pool.ts). */
await serveBrowserPool(renderInPage)
