import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from '../platform/platform.js'

/** A file of the hostile-input corpus (test/fixtures/hostile; see its README). */
export function hostile(name: string): Buffer {
  return readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'hostile', name))
}

/** A document of office-pdf's corpus (test/fixtures/documents). */
export function officeDocument(name: string): Buffer {
  return readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'documents', name))
}
