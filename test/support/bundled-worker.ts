import { mkdtempSync, rmSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { afterAll, beforeAll } from 'vitest'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/**
 * A runner's worker program bundled as the runner bundles it (runners/bundle-runners.ts), for the
 * unit tests of the file that starts it: built before the file's tests, removed after them.
 * `entry` is relative to the repository; `external` packages load from node_modules.
 */
export function bundledWorker(entry: string, external: string[] = []): { readonly url: URL } {
  const state = { url: new URL('file:///unbuilt'), dir: '' }
  beforeAll(async () => {
    state.dir = mkdtempSync(join(REPO, 'node_modules', '.dutil-worker-'))
    const outfile = join(state.dir, basename(entry).replace(/\.ts$/, '.mjs'))
    await build({
      entryPoints: [join(REPO, entry)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external,
      logLevel: 'warning',
    })
    state.url = pathToFileURL(outfile)
  })
  afterAll(() => rmSync(state.dir, { recursive: true, force: true }))
  return state
}
