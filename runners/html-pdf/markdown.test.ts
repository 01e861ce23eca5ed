import { describe, expect, it } from 'vitest'
import { MARKDOWN_STYLESHEET, markdownPage } from './markdown.js'

describe('markdownPage', () => {
  it('renders GitHub-flavoured Markdown in the default stylesheet, titled by its first heading', () => {
    const page = markdownPage(
      '# Q3 <em>report</em> & plans\n\n| City | People |\n|---|---:|\n| Porto | 232,000 |\n\n- [x] done\n- [ ] open\n\n~~old~~ https://example.com\n\n```js\nconst a = 1 < 2\n```\n',
    )
    expect(page).toMatch(
      /^<!doctype html><html><head><meta charset="utf-8"><title>Q3 report &amp; plans<\/title><style>/,
    )
    expect(page).toContain(MARKDOWN_STYLESHEET)
    expect(page).toContain('<th>City</th>')
    expect(page).toContain('<td align="right">232,000</td>')
    expect(page).toContain('<li class="task"><input checked="" disabled="" type="checkbox"> done</li>')
    expect(page).toContain('<del>old</del>')
    expect(page).toContain('<a href="https://example.com">https://example.com</a>')
    expect(page).toContain('<code class="language-js">const a = 1 &lt; 2\n</code>')
  })

  it('takes a stylesheet in place of the default one, which cannot close its style element; no heading, no title', () => {
    const page = markdownPage('plain text', 'p { color: red } </style><script>alert(1)</script>')
    expect(page).not.toContain(MARKDOWN_STYLESHEET)
    expect(page).not.toContain('<title>')
    expect(page).toContain('<style>p { color: red } <\\/style><script>alert(1)</script></style>')
    expect(page.match(/<\/style>/g)).toHaveLength(1)
  })
})
