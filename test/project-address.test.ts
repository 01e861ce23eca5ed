import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'

/**
 * Every package and the chart name one project address, the chart's `home`: where a user of a
 * packed client, the CLI or the chart finds the source, the issue tracker and the runbooks.
 * (The packed artefacts are checked where they are packed: the clients' and the CLI's tests.)
 */
const ROOT = join(import.meta.dirname, '..')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const json = (path: string) => JSON.parse(read(path)) as Record<string, unknown>

const chart = parse(read('charts/dutil/Chart.yaml')) as { home: string; sources?: string[] }
const HOME = chart.home

describe('the project address', () => {
  it('is a plain https address, and the chart lists it among its sources', () => {
    expect(HOME).toMatch(/^https:\/\/[a-z0-9.-]+\/[\w.-]+\/[\w.-]+$/)
    expect(chart.sources).toEqual([HOME])
  })

  it('is the repository, homepage and issue tracker of the root package and the TypeScript client', () => {
    for (const [path, directory, readme] of [
      ['package.json', undefined, `${HOME}#readme`],
      ['clients/typescript/package.json', 'clients/typescript', `${HOME}/tree/main/clients/typescript#readme`],
    ] as const) {
      const pkg = json(path)
      expect(pkg.repository, path).toEqual({ type: 'git', url: `git+${HOME}.git`, ...(directory ? { directory } : {}) })
      expect(pkg.homepage, path).toBe(readme)
      expect(pkg.bugs, path).toEqual({ url: `${HOME}/issues` })
    }
  })

  it('is the Python client’s project URLs', () => {
    const urls = Object.fromEntries(
      [...read('clients/python/pyproject.toml').matchAll(/^(Homepage|Source|Issues) = "(.*)"$/gm)].map((m) => [
        m[1],
        m[2],
      ]),
    )
    expect(urls).toEqual({
      Homepage: `${HOME}/tree/main/clients/python#readme`,
      Source: HOME,
      Issues: `${HOME}/issues`,
    })
  })

  it('is where the alerts’ runbook links point by default', () => {
    const values = parse(read('charts/dutil/values.yaml')) as {
      metrics: { prometheusRule: { runbookBaseUrl: string } }
    }
    expect(values.metrics.prometheusRule.runbookBaseUrl).toBe(`${HOME}/blob/main/docs/runbooks.md`)
  })
})
