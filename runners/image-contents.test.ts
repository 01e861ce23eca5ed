import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { packageClosure } from './image-contents.js'

const modules = mkdtempSync(join(tmpdir(), 'dutil-closure-'))
afterAll(() => rmSync(modules, { recursive: true, force: true }))
function install(
  name: string,
  dependencies: Record<string, string> = {},
  devDependencies: Record<string, string> = {},
) {
  mkdirSync(join(modules, name), { recursive: true })
  writeFileSync(join(modules, name, 'package.json'), JSON.stringify({ name, dependencies, devDependencies }))
}

describe("a runner image's packages", () => {
  it('are the packages loaded by name and everything they depend on, once each, not their dev dependencies', () => {
    install('sheets', { codec: '^1', '@scope/crc': '^2' }, { tester: '^3' })
    install('codec', { '@scope/crc': '^2' })
    install('@scope/crc')
    install('unrelated')
    install('tester')
    expect(packageClosure(['sheets'], modules)).toEqual(['@scope/crc', 'codec', 'sheets'])
    expect(packageClosure([], modules)).toEqual([])
  })

  it('refuses a dependency that is not installed, naming it', () => {
    install('broken', { missing: '^1' })
    expect(() => packageClosure(['broken'], modules)).toThrow(/missing is not installed/)
  })
})
