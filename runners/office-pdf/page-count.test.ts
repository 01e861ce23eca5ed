import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { countPdfPages } from './page-count.js'

const dir = await mkdtemp(join(tmpdir(), 'page-count-'))
afterAll(() => rm(dir, { recursive: true, force: true }))

async function count(text: string): Promise<number> {
  const path = join(dir, `${Math.random()}.pdf`)
  await writeFile(path, text, 'latin1')
  return countPdfPages(path)
}

describe('countPdfPages', () => {
  it('counts page objects, never the page tree’s /Pages nodes', async () => {
    expect(
      await count(
        '1 0 obj<</Type/Pages/Kids[2 0 R 3 0 R]/Count 2>>endobj 2 0 obj<</Type/Page/Parent 1 0 R>>endobj 3 0 obj<</Type /Page>>endobj',
      ),
    ).toBe(2)
    expect(await count('<</Type/Pages>>')).toBe(0)
    expect(await count('<</Type/Page')).toBe(1)
  })

  it('counts an entry split across the 1 MB chunks once, and /Pages split there never', async () => {
    const mb = 1024 * 1024
    for (const cut of [1, 5, 10, 11]) {
      const entry = '/Type/Page>>'
      const body = 'x'.repeat(mb - cut) + entry + 'y'.repeat(100) + '/Type/Page/Parent'
      expect(await count(body), `cut ${cut}`).toBe(2)
      const pages = 'x'.repeat(mb - 10) + '/Type/Pages/Kids'
      expect(await count(pages), `cut ${cut}`).toBe(0)
    }
    expect(await count('/Type/Page '.repeat(300_000))).toBe(300_000)
  })
})
