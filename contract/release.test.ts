import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { catalog } from '../runners/catalog.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const read = (p: string) => readFileSync(join(root, p), 'utf8')

describe('release artefacts agree', () => {
  it("the chart's appVersion (its default image tag) is the package version images are tagged with", () => {
    expect(parse(read('charts/dutil/Chart.yaml')).appVersion).toBe(JSON.parse(read('package.json')).version)
  })

  it('every utility in the catalog has a runner image recipe and a chart resources entry', () => {
    const values = parse(read('charts/dutil/values.yaml'))
    for (const u of catalog.values()) {
      // Its own image, or the image of another utility whose recipe builds its program too
      // (html-image runs in html-pdf's, beside the same browser).
      const host = u.runner.image.replace(/^dutil-runner-/, '')
      expect(catalog.get(host)?.runner.image, `${u.slug} runs in ${u.runner.image}`).toBe(`dutil-runner-${host}`)
      expect(
        existsSync(join(root, 'images', `runner-${host}`, 'Dockerfile')) ||
          existsSync(join(root, 'images', 'runner', 'Dockerfile')),
      ).toBe(true)
      if (host !== u.slug)
        expect(read(`images/runner-${host}/Dockerfile`)).toContain(`dist/runners/${u.slug}/bundle/main.js`)
      expect(values.runners[u.slug], `runners.${u.slug} in charts/dutil/values.yaml`).toBeDefined()
      expect(u.runner.entry).toBe(`dist/runners/${u.slug}/bundle/main.js`) // what images/runner/Dockerfile's entrypoint imports
    }
    expect(Object.keys(values.runners).sort()).toEqual([...catalog.keys()].sort())
    const schemaRunners = JSON.parse(read('charts/dutil/values.schema.json')).properties.runners.properties
    expect(Object.keys(schemaRunners).sort()).toEqual([...catalog.keys()].sort())
  })
})
