import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import Router from '@koa/router'
import type { Context } from 'koa'
import type { ConsoleConfig } from './config.js'

/** The compiled front end (tsconfig.ui.json builds gateway/console/ui/ into dist/, beside this file). */
const UI_DIR = fileURLToPath(new URL('./ui/', import.meta.url))
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
}

function loadAssets(): Map<string, { body: Buffer; type: string }> {
  const assets = new Map<string, { body: Buffer; type: string }>()
  if (!existsSync(UI_DIR)) return assets
  for (const name of readdirSync(UI_DIR)) {
    const ext = Object.keys(TYPES).find((e) => name.endsWith(e))
    if (ext && /^[\w.-]+$/.test(name)) assets.set(name, { body: readFileSync(UI_DIR + name), type: TYPES[ext] })
  }
  return assets
}

/** Headers of every console page: a strict CSP (no inline script or style), no framing, no referrer (invite links carry tokens). */
function securityHeaders(ctx: Context, config: ConsoleConfig): void {
  const idp = config.oidc ? ` ${new URL(config.oidc.issuer).origin}` : ''
  ctx.set(
    'Content-Security-Policy',
    `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'${idp}; frame-ancestors 'none'; base-uri 'none'; object-src 'none'`,
  )
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('Referrer-Policy', 'no-referrer')
  ctx.set('X-Frame-Options', 'DENY')
}

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>dutil console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script type="module" src="/console/assets/main.js"></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<div id="app"><p class="boot" role="status">Loading the console…</p></div>
<noscript><p class="boot">The dutil console needs JavaScript.</p></noscript>
</body>
</html>
`

/** The single-page shell for every console path, and the compiled assets under /console/assets/. */
export function uiRoutes(config: ConsoleConfig): Router {
  const assets = loadAssets()
  const r = new Router({ strict: true })
  r.get('/console/assets/:name', (ctx) => {
    const asset = assets.get(ctx.params.name)
    if (!asset) return
    securityHeaders(ctx, config)
    ctx.set('Cache-Control', 'no-cache')
    ctx.type = asset.type
    ctx.body = asset.body
  })
  r.get('/console', (ctx) => ctx.redirect('/console/'))
  r.get(/^\/console\/(?!api\/|assets\/).*$/, (ctx) => {
    securityHeaders(ctx, config)
    ctx.set('Cache-Control', 'no-store')
    ctx.type = 'text/html; charset=utf-8'
    ctx.body = SHELL
  })
  return r
}
