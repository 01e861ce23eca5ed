import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { bundledPackages, noticesFile, packageDirOf } from './notices.js'

const root = mkdtempSync(join(tmpdir(), 'dutil-notices-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

function pkg(dir: string, json: object, files: Record<string, string> = {}) {
  mkdirSync(join(root, dir), { recursive: true })
  writeFileSync(join(root, dir, 'package.json'), JSON.stringify(json))
  for (const [f, text] of Object.entries(files)) writeFileSync(join(root, dir, f), text)
}

describe('third-party notices of a bundle', () => {
  it('finds the package of each input, scoped and nested ones included', () => {
    expect(packageDirOf('node_modules/yaml/dist/index.js')).toBe(join('node_modules', 'yaml'))
    expect(packageDirOf('node_modules/@kubernetes/client-node/dist/api.js')).toBe(
      join('node_modules', '@kubernetes', 'client-node'),
    )
    expect(packageDirOf('node_modules/a/node_modules/b/index.js')).toBe(join('node_modules', 'a', 'node_modules', 'b'))
    expect(packageDirOf('cli/main.ts')).toBeNull()
  })

  it('lists each package once with its licence files, and says so when a package ships none', () => {
    pkg('node_modules/alpha', { name: 'alpha', version: '1.2.3', license: 'MIT' }, { LICENSE: 'MIT text of alpha\n' })
    pkg(
      'node_modules/@s/beta',
      { name: '@s/beta', version: '2.0.0', license: 'Apache-2.0' },
      { 'LICENSE.txt': 'Apache text', NOTICE: 'beta notice', 'index.js': '' },
    )
    pkg('node_modules/gamma', { name: 'gamma', version: '0.1.0', license: 'ISC' })
    const packages = bundledPackages(
      [
        'node_modules/alpha/index.js',
        'node_modules/alpha/lib/x.js',
        'node_modules/@s/beta/index.js',
        'node_modules/gamma/index.js',
        'cli/main.ts',
      ],
      root,
    )
    expect(packages.map((p) => `${p.name}@${p.version}`)).toEqual(['@s/beta@2.0.0', 'alpha@1.2.3', 'gamma@0.1.0'])
    expect(packages[0].texts.map((t) => t.file)).toEqual(['LICENSE.txt', 'NOTICE'])
    const text = noticesFile('The dutil CLI', packages)
    expect(text).toContain('## alpha 1.2.3 (MIT)\n\n```text\nMIT text of alpha\n```')
    expect(text).toContain('beta notice')
    expect(text).toContain('## gamma 0.1.0 (ISC)\n\nThe package ships no licence file; its package.json declares ISC.')
  })
})
