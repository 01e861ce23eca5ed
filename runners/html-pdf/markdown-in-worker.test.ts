import { describe, expect, it } from 'vitest'
import { bundledWorker } from '../../test/support/bundled-worker.js'
import { MARKDOWN_LIMITS, renderMarkdown } from './markdown-in-worker.js'

// The worker runs as the runner runs it: bundled (runners/bundle-runners.ts).
const worker = bundledWorker('runners/html-pdf/markdown.worker.ts')

describe('renderMarkdown', () => {
  it("renders a page in the worker, with the caller's stylesheet", async () => {
    const html = await renderMarkdown('# Notes\n\n| a | b |\n|---|---|\n| 1 | 2 |', 'td { color: red }', worker.url)
    expect(html).toContain('<title>Notes</title>')
    expect(html).toContain('<style>td { color: red }</style>')
    expect(html).toContain('<td>1</td>')
  })

  it('refuses Markdown that needs more memory, a deeper stack or more time than its limits, as upstream_rejected', async () => {
    const small = { ...MARKDOWN_LIMITS, heapMb: 64 }
    // A list nested a thousand deep: some 1 MB of text, more memory than the limit to parse.
    const nested = Array.from({ length: 1000 }, (_, i) => `${' '.repeat(i * 2)}- x`).join('\n')
    await expect(renderMarkdown(nested, undefined, worker.url, small)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringMatching(
        /^The Markdown is too large or too deeply nested to render: it needs more than 64 MB/,
      ),
    })
    await expect(renderMarkdown(`${'>'.repeat(200_000)} x`, undefined, worker.url)).rejects.toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringContaining('it nests deeper than the parser can follow'),
    })
    const line = '| a | **b** | [c](http://x) |\n'
    await expect(
      renderMarkdown(`| h | i | j |\n|---|---|---|\n${line.repeat(60_000)}`, undefined, worker.url, {
        ...MARKDOWN_LIMITS,
        ms: 50,
      }),
    ).rejects.toMatchObject({ code: 'upstream_rejected', message: expect.stringContaining('it took more than 0.05 s') })
  }, 60_000)
})
