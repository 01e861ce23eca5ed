import { copyFileSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { build } from 'esbuild'
import { catalog } from './catalog.js'
import type { UtilityDefinition } from '../contract/utility.js'

/**
 * Bundles each runner into one file per entry point (`npm run build`, after tsc), so a runner
 * pod starts by reading one file instead of resolving ~700 modules: Node start-up plus module
 * loading is what every small job pays (docs/adr/0017-bundled-runners.md). The entry points of
 * runners/<slug>/ are main.ts and every *.worker.ts (a worker thread's own program), written
 * side by side to the directory of the catalog's `runner.entry`, so `new URL('./x.worker.js',
 * import.meta.url)` finds the bundled worker. Packages a runner loads at run time by name (its
 * `runner.external`) stay in node_modules.
 */

const ROOT = join(dirname(new URL(import.meta.url).pathname), '..', '..')

/** The source entry points of one runner: main.ts, its pool-mode pool.ts and its worker programs. */
function runnerEntryPoints(slug: string, files: readonly string[]): string[] {
  return files
    .filter((f) => f === 'main.ts' || f === 'pool.ts' || f.endsWith('.worker.ts'))
    .sort()
    .map((f) => `runners/${slug}/${f}`)
}

async function bundle(u: UtilityDefinition): Promise<void> {
  const files = readdirSync(join(ROOT, 'runners', u.slug))
  const entryPoints = runnerEntryPoints(u.slug, files).map((p) => join(ROOT, p))
  const outdir = join(ROOT, dirname(u.runner.entry))
  await build({
    entryPoints,
    outdir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // A dynamic import() becomes its own chunk, loaded when reached: html-pdf's entry starts the
    // browser before it loads puppeteer and the rest. Code shared by a main.ts and its workers
    // becomes a chunk too.
    splitting: true,
    chunkNames: '[name]-[hash]',
    external: u.runner.external ?? [],
    // CommonJS packages inside an ES module bundle still call require() for Node's built-ins.
    banner: {
      js: "import { createRequire as __dutilCreateRequire } from 'node:module'; const require = __dutilCreateRequire(import.meta.url);",
    },
    // Less to parse at start-up (compiling the bundle is most of what loading costs); function
    // and class names stay for stack traces, and the linked source map maps the rest.
    minify: true,
    keepNames: true,
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
  })
  // Programs a runner starts in another language (office-pdf's LibreOffice converter) go beside
  // its bundle as they are, and beside the compiled modules for runs from dist/ without it.
  for (const f of files.filter((name) => name.endsWith('.py'))) {
    copyFileSync(join(ROOT, 'runners', u.slug, f), join(outdir, f))
    copyFileSync(join(ROOT, 'runners', u.slug, f), join(ROOT, 'dist', 'runners', u.slug, f))
  }
}

const started = performance.now()
await Promise.all([...catalog.values()].map(bundle))
process.stdout.write(`[bundle] ${catalog.size} runners bundled in ${Math.round(performance.now() - started)} ms\n`)
