import { spawn, type ChildProcess } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import type { ConnectionTransport } from 'puppeteer-core'
import { allowedEnv } from '../common/child-env.js'
import { killWithRunner } from '../common/child-groups.js'

/**
 * Debian's chromium-headless-shell: the headless-only build of Chromium (what puppeteer calls
 * chrome-headless-shell), which starts and prints a small page about 3× faster than the full
 * browser at a fraction of its CPU (docs/benchmarks.md). Every flag below works the same in both.
 */
export const CHROMIUM = process.env.DUTIL_CHROMIUM_PATH || '/usr/bin/chromium-headless-shell'

/**
 * Chromium's own sandbox (its renderers in user, PID and network namespaces of their own, a
 * chroot and a seccomp filter) is on only where the platform team turned it on
 * (`browserSandbox`, docs/adr/0031-chromium-sandbox.md): it needs user namespaces, which the
 * container runtime's default seccomp profile refuses, so the pod needs a profile that allows
 * them. Elsewhere the browser runs with --no-sandbox and the pod is the boundary.
 */
export const CHROMIUM_SANDBOX = process.env.DUTIL_CHROMIUM_SANDBOX === 'true'

/**
 * Chromium flags. Every request the page makes is intercepted and fetched by the runner through
 * the address guard; as a backstop, anything that escapes interception (service workers,
 * WebSockets, popups) goes to a proxy that does not exist, loopback included, and WebRTC may not
 * use UDP outside a proxy.
 */
export const CHROMIUM_ARGS = [
  '--headless=new',
  ...(CHROMIUM_SANDBOX ? [] : ['--no-sandbox']),
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
 * What a browser that takes pictures adds (html-image): Chromium's begin-frame control, so a
 * page's frames are drawn only when the runner asks for them (runners/html-image/frames.ts), every
 * compositor stage run before a frame is drawn, and no 60 Hz clock of its own. A page loads
 * without rasterising frames nobody looks at, and a picture does not wait for the next tick: a
 * small page's job in the browser took what its PDF takes (docs/adr/0047-pictures-drawn-on-demand.md).
 */
export const PICTURE_ARGS = ['--enable-begin-frame-control', '--run-all-compositor-stages-before-draw']

/**
 * The browser's environment: only what a browser needs, never the runner's (its storage
 * credentials in job mode, nothing of the pool's). A renderer a hostile page compromised finds
 * no secret in its own environment.
 */
const BROWSER_ENV = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'LC_ALL', 'TZ', 'FONTCONFIG_FILE', 'FONTCONFIG_PATH'] as const

export function browserEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return allowedEnv(BROWSER_ENV, env)
}

export interface StartedChromium {
  child: ChildProcess
  transport: ConnectionTransport
  /** Settles when the browser process is gone. */
  exited: Promise<void>
  /** Kills the whole browser at once (its profile is thrown away anyway). */
  kill(): void
}

/**
 * Starts Chromium speaking the DevTools protocol over a pipe (fd 3 in, fd 4 out; no port
 * anyone else could reach). The runner starts it before loading puppeteer, so the browser boots
 * while the rest of the program loads; puppeteer then connects through this transport.
 */
export function startChromium(executable: string, args: readonly string[], userDataDir: string): StartedChromium {
  const child = spawn(
    executable,
    [...args, '--remote-debugging-pipe', `--user-data-dir=${userDataDir}`, 'about:blank'],
    {
      stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
      env: browserEnv(),
      detached: true, // its own process group, so kill() takes the renderers along
    },
  )
  const toBrowser = child.stdio[3] as Writable
  const fromBrowser = child.stdio[4] as Readable
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.once('error', () => undefined)
  toBrowser.on('error', () => undefined)
  const transport: ConnectionTransport = {
    send(message) {
      toBrowser.write(`${message}\0`)
    },
    close() {
      toBrowser.end()
    },
  }
  let pending = ''
  fromBrowser.setEncoding('utf8')
  fromBrowser.on('data', (chunk: string) => {
    pending += chunk
    let end: number
    while ((end = pending.indexOf('\0')) >= 0) {
      const message = pending.slice(0, end)
      pending = pending.slice(end + 1)
      transport.onmessage?.(message)
    }
  })
  fromBrowser.on('close', () => transport.onclose?.())
  const kill = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  killWithRunner(child)
  return { child, transport, exited, kill }
}
