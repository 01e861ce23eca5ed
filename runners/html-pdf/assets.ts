/**
 * The files a page of dutil's own refers to (docs/api.md, html-pdf): served to the browser under
 * the page's own origin by the names the page uses.
 */

/** What a page's asset is called by the page: its `name`, else its file's own name. */
export function assetNameOf(asset: { url: string; name?: string }): string {
  if (asset.name !== undefined) return asset.name
  const last = asset.url.slice(asset.url.lastIndexOf('/') + 1)
  try {
    return decodeURIComponent(last)
  } catch {
    return last
  }
}

/** The asset a request of the page names: its decoded path (no query), or null when it names none. */
export function assetPathOf(url: string): string | null {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1)) || null
  } catch {
    return null
  }
}

/** Types of the files a page refers to, by extension: Chromium applies a stylesheet or runs a script only of its own type. */
const ASSET_TYPES: Record<string, string> = {
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  html: 'text/html',
  htm: 'text/html',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  json: 'application/json',
  txt: 'text/plain',
}

export function assetContentType(name: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase()
  return (ext && ASSET_TYPES[ext]) || 'application/octet-stream'
}

/** Whether a document's name says it is Markdown (an upload or output named *.md or *.markdown). */
export const isMarkdownName = (name: string): boolean => /\.(md|markdown)$/i.test(name)

/**
 * Whether an HTML document without a declared encoding (a byte order mark, or a <meta> naming a
 * charset in its first 1024 bytes, where browsers look) is valid UTF-8: then it is sent as UTF-8,
 * where a browser would read it as windows-1252 and show "ZÃ¼rich" for "Zürich".
 */
export function readsAsUtf8(document: Buffer): boolean {
  const head = document.subarray(0, 1024).toString('latin1')
  if (/^(\xef\xbb\xbf|\xfe\xff|\xff\xfe)/.test(head) || /<meta[^>]+charset/i.test(head)) return false
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(document)
    return true
  } catch {
    return false
  }
}
