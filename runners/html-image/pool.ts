import { serveBrowserPool } from '../html-pdf/browser-pool.js'
import { CHROMIUM_ARGS, PICTURE_ARGS } from '../html-pdf/chromium.js'
import { openPicturePage } from './frames.js'
import { pictureInPage } from './picture.js'

/** html-image in pool mode: a warm browser, a fresh context per job (as html-pdf's), its page drawn on demand. */
await serveBrowserPool(pictureInPage, [...CHROMIUM_ARGS, ...PICTURE_ARGS], openPicturePage)
