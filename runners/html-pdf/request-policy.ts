/**
 * What the page may load. http(s) go through the address guard (fetched by the runner, never
 * by Chromium itself); data:, blob: and about: stay inside the browser; every other scheme
 * (file:, ftp:, chrome:, ws:, …) is refused.
 */
export type RequestRoute = 'fetch' | 'internal' | 'refuse'

export function routeRequest(url: string): RequestRoute {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase()
  if (scheme === 'http' || scheme === 'https') return 'fetch'
  if (scheme === 'data' || scheme === 'blob' || url === 'about:blank' || url === 'about:srcdoc') return 'internal'
  return 'refuse'
}

/** Headers of an upstream answer that must not be passed to Chromium as they are. */
const DROP = new Set([
  'content-encoding',
  'transfer-encoding',
  'content-length',
  'connection',
  'keep-alive',
  'proxy-connection',
  'upgrade',
  'trailer',
  'te',
])

export function responseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || DROP.has(k.toLowerCase())) continue
    out[k] = Array.isArray(v) ? v.join(k.toLowerCase() === 'set-cookie' ? '\n' : ', ') : v
  }
  return out
}

/** Request headers worth forwarding upstream (Chromium's own view of what it wants). */
export function forwardHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { 'accept-encoding': 'identity' }
  for (const k of ['accept', 'accept-language', 'referer', 'user-agent', 'range']) if (headers[k]) out[k] = headers[k]
  return out
}

/** Chromium's console message when a page tries a local file; it blocks those before any interceptor sees them. */
export function localResourceFromConsole(text: string): string | null {
  return /Not allowed to load local resource: (\S+)/.exec(text)?.[1] ?? null
}
