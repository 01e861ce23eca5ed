import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from './platform/platform.js'

/** charts/dutil/README.md is what helm-docs makes of values.yaml and README.md.gotmpl now. */
const helmDocs = join(process.env.DUTIL_CACHE ?? join(homedir(), '.cache', 'dutil'), 'bin', 'helm-docs')
const chart = join(REPO_ROOT, 'charts', 'dutil')

describe('the chart README', () => {
  it('is generated from values.yaml as it is now (make chart-readme)', () => {
    expect(existsSync(helmDocs), `${helmDocs}: run make binaries`).toBe(true)
    const generated = execFileSync(
      helmDocs,
      ['--chart-search-root', chart, '--template-files', 'README.md.gotmpl', '--log-level', 'warning', '--dry-run'],
      { encoding: 'utf8' },
    )
    expect(generated, 'run `make chart-readme`').toBe(readFileSync(join(chart, 'README.md'), 'utf8'))
  })

  it('describes every value a platform team sets most: storage, database, Redis, images, runners', () => {
    const readme = readFileSync(join(chart, 'README.md'), 'utf8')
    for (const key of ['storage.endpoint', 'database.existingSecret', 'redis.url', 'image.registry', 'runnerPod'])
      expect(readme).toMatch(new RegExp(`^\\| ${key.replace('.', '\\.')} \\| \\w+ \\| .* \\| \\S.* \\|$`, 'm'))
  })
})
