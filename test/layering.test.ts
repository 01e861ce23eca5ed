import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { importsOf, layeringViolations, packagesLoadedBy } from './support/layering.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..')
const ROOTS = ['contract', 'platform', 'runners', 'gateway', 'operator', 'cli', 'clients/typescript/src']

/** Every TypeScript source under the layered folders, by repository path. */
function sources(): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === 'dist') continue
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts'))
        out.set(relative(REPO, p).split(sep).join('/'), readFileSync(p, 'utf8'))
    }
  }
  for (const root of ROOTS) walk(join(REPO, root))
  return out
}

describe('layering (docs/architecture.md)', () => {
  it('no import runs from a lower layer to a higher one', () => {
    const files = sources()
    expect(files.size).toBeGreaterThan(150)
    expect(layeringViolations(files)).toEqual([])
  })

  it('finds an import that runs upward, a program reaching past the catalog, and I/O in contract/', () => {
    const files = new Map([
      ['contract/ids.ts', "import { x } from '../gateway/app.js'\nimport type { Client } from 'minio'\n"],
      ['contract/status.ts', "import { Client } from 'minio'\nexport const l = () => import('../platform/kube.js')\n"],
      [
        'gateway/app.ts',
        "import { catalog } from '../runners/catalog.js'\nimport { f } from '../runners/common/outbound-fetch.js'\nimport { g } from '../operator/main.js'\n",
      ],
      ['runners/common/x.ts', "export * from '../../gateway/app.js'\nimport '../../test/support/pdfs.js'\n"],
      ['gateway/app.test.ts', "import { g } from '../operator/main.js'\n"],
      [
        'gateway/console/routes/keys.ts',
        "import type { KeyItem } from '../ui/api-types.js'\nimport { h } from '../ui/dom.js'\n",
      ],
      ['gateway/console/ui/api-types.ts', "import type { JobView } from '../../../contract/job-view.js'\n"],
    ])
    expect(layeringViolations(files)).toEqual([
      'contract/ids.ts → gateway/app.ts (contract may import contract; not gateway)',
      "contract/status.ts → minio (contract/ is data: no I/O package's code)",
      'contract/status.ts → platform/kube.ts (contract may import contract; not platform)',
      'gateway/app.ts → runners/common/outbound-fetch.ts (gateway may import contract, platform, catalog, gateway, console-types; not runners)',
      'gateway/app.ts → operator/main.ts (gateway may import contract, platform, catalog, gateway, console-types; not operator)',
      'runners/common/x.ts → gateway/app.ts (runners may import contract, platform, runners, catalog; not gateway)',
      'runners/common/x.ts → test/support/pdfs.ts (nothing outside test/ imports test/)',
      'gateway/console/routes/keys.ts → gateway/console/ui/dom.ts (gateway may import contract, platform, catalog, gateway, console-types; not ui)',
      'gateway/console/ui/api-types.ts → contract/job-view.ts (console-types may import nothing of ours; not contract)',
    ])
  })

  it('reads static, re-exported, dynamic and type-only imports', () => {
    expect(
      importsOf(
        'a.ts',
        "import type { A } from './a.js'\nimport { b } from 'b'\nexport { c } from './c.js'\nconst d = await import('./d.js')\n",
      ),
    ).toEqual([
      { specifier: './a.js', typeOnly: true },
      { specifier: 'b', typeOnly: false },
      { specifier: './c.js', typeOnly: false },
      { specifier: './d.js', typeOnly: false },
    ])
  })
})

describe('the programs make runs with node (make dev, the benches)', () => {
  const fromDisk = (path: string) => (existsSync(join(REPO, path)) ? readFileSync(join(REPO, path), 'utf8') : undefined)
  const testFramework = (pkg: string) => pkg === 'vitest' || pkg.startsWith('vitest/') || pkg.startsWith('@vitest/')
  const programs = [
    ...new Set(
      [...readFileSync(join(REPO, 'Makefile'), 'utf8').matchAll(/\bnode dist\/([\w/.-]+)\.js\b/g)].map(
        (m) => `${m[1]}.ts`,
      ),
    ),
  ]

  it('load no test framework: vitest imported outside a test run stops a program at its start', () => {
    expect(programs).toContain('test/platform/dev.ts')
    expect(programs.length).toBeGreaterThan(10)
    const problems: string[] = []
    for (const program of programs) {
      expect(fromDisk(program), program).toBeDefined()
      const loaded = packagesLoadedBy(program, fromDisk)
      for (const [pkg, chain] of loaded) if (testFramework(pkg)) problems.push(`${pkg} ← ${chain.join(' ← ')}`)
    }
    expect(problems).toEqual([])
  })

  it('follows value imports, skips type-only ones, and names the chain that reaches a package', () => {
    const files = new Map([
      ['test/platform/dev.ts', "import { a } from './a.js'\nimport type { T } from '../support/typed.js'\n"],
      ['test/platform/a.ts', "import { p } from '../support/pdfs.js'\nimport { join } from 'node:path'\n"],
      ['test/support/pdfs.ts', "import { afterAll } from 'vitest'\nimport { a } from '../platform/a.js'\n"],
      ['test/support/typed.ts', "import { expect } from '@vitest/expect'\n"],
    ])
    expect(packagesLoadedBy('test/platform/dev.ts', (path) => files.get(path))).toEqual(
      new Map([['vitest', ['test/platform/dev.ts', 'test/platform/a.ts', 'test/support/pdfs.ts']]]),
    )
  })
})
