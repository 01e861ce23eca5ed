import { Marked, type Tokens } from 'marked'

/**
 * A page of Markdown (GitHub-flavoured: tables, task lists, strikethrough, autolinks, fenced
 * code), rendered to HTML in the runner. Its raw HTML stays as written: the page is then loaded
 * exactly as a page given as `html`, under the same request rules, so nothing it names reaches
 * more than such a page may.
 */
const markdown = new Marked({ gfm: true, breaks: false, async: false })

/** The default look: a readable document in print (GitHub's proportions, no web chrome). */
export const MARKDOWN_STYLESHEET = `
html { -webkit-print-color-adjust: exact; print-color-adjust: exact }
body { font-family: "Liberation Sans", "DejaVu Sans", "Noto Sans", Arial, sans-serif; font-size: 11pt;
  line-height: 1.5; color: #1f2328; margin: 0; padding: 0 }
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.2em 0 0.5em; break-after: avoid }
h1 { font-size: 2em; border-bottom: 1px solid #d1d9e0; padding-bottom: 0.3em }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: 0.3em }
h3 { font-size: 1.25em }
p, ul, ol, table, pre, blockquote { margin: 0 0 1em }
a { color: #0969da; text-decoration: none }
code, pre { font-family: "Liberation Mono", "DejaVu Sans Mono", "Noto Sans Mono", monospace; font-size: 0.9em }
code { background: #eff1f3; border-radius: 4px; padding: 0.15em 0.35em }
pre { background: #f6f8fa; border-radius: 6px; padding: 0.9em 1em; white-space: pre-wrap; word-wrap: break-word }
pre code { background: none; padding: 0 }
blockquote { border-left: 0.25em solid #d1d9e0; color: #59636e; padding: 0 1em; margin-left: 0 }
table { border-collapse: collapse; break-inside: auto }
th, td { border: 1px solid #d1d9e0; padding: 0.35em 0.8em }
th { background: #f6f8fa; font-weight: 600 }
tr { break-inside: avoid }
img { max-width: 100% }
hr { border: 0; border-top: 1px solid #d1d9e0; margin: 1.5em 0 }
li.task { list-style: none }
li.task input { margin: 0 0.4em 0 -1.3em }
`

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!)

/**
 * The whole HTML page of a Markdown text: its first top-level heading as the title (the PDF's
 * title too), `stylesheet` in place of the default one when given.
 */
export function markdownPage(text: string, stylesheet?: string): string {
  const tokens = markdown.lexer(text)
  const heading = tokens.find((t): t is Tokens.Heading => t.type === 'heading' && t.depth === 1)
  const body = markdown.parser(tokens).replace(/<li><input /g, '<li class="task"><input ')
  const title = heading ? `<title>${escapeHtml(heading.text.replace(/<[^>]*>/g, '').slice(0, 500))}</title>` : ''
  // A stylesheet of the caller's own cannot end the style element early.
  const css = (stylesheet ?? MARKDOWN_STYLESHEET).replace(/<\/style/gi, '<\\/style')
  return `<!doctype html><html><head><meta charset="utf-8">${title}<style>${css}</style></head><body>${body}</body></html>`
}
