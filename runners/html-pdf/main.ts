import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startChromium } from './chromium.js'

/**
 * Debian's chromium-headless-shell: the headless-only build of Chromium (what puppeteer calls
 * chrome-headless-shell), which starts and prints a small page about 3× faster than the full
 * browser at a fraction of its CPU (docs/benchmarks.md). Every flag below works the same in both.
 */
export const CHROMIUM = process.env.DUTIL_CHROMIUM_PATH || '/usr/bin/chromium-headless-shell'

/**
 * Chromium flags. Every request the page makes is intercepted and fetched by the runner through
 * the address guard; as a backstop, anything that escapes interception (service workers,
 * WebSockets, popups) goes to a proxy that does not exist, loopback included, and WebRTC may not
 * use UDP outside a proxy.
 */
export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox', // containers drop the capabilities the setuid sandbox needs; the pod is the sandbox
  '--disable-dev-shm-usage',
  '--disable-gpu',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--disable-default-apps',
  '--mute-audio',
  '--hide-scrollbars',
  '--dns-prefetch-disable',
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-features=ServiceWorker,PrivateNetworkAccessSendPreflights,MediaRouter,OptimizationHints',
]

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
