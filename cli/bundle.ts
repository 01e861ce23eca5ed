import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { build } from 'esbuild'
import { bundledPackages, noticesFile } from './notices.js'

/**
 * The CLI as a package of its own (`npm run build`, after tsc): one bundled file with every
 * dependency inside, plus a package.json naming it as the `dutil` command, in dist/cli-package/.
 * `npm pack dist/cli-package` makes the tarball that `npm install -g` or `npx` takes, with no
 * repository and no other package.
 */
const ROOT = join(dirname(new URL(import.meta.url).pathname), '..', '..')
const OUT = join(ROOT, 'dist', 'cli-package')
const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string
  license: string
  homepage: string
  repository: { type: string; url: string }
  bugs: { url: string }
  engines: Record<string, string>
}

const started = performance.now()
rmSync(OUT, { recursive: true, force: true })
mkdirSync(OUT, { recursive: true })
const built = await build({
  entryPoints: [join(ROOT, 'cli', 'main.ts')],
  outfile: join(OUT, 'dutil.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  define: { __DUTIL_VERSION__: JSON.stringify(root.version) },
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __dutilCreateRequire } from 'node:module'; const require = __dutilCreateRequire(import.meta.url);",
  },
  minify: true,
  keepNames: true,
  // The licences of the bundled packages go in THIRD-PARTY-NOTICES.md, whole, rather than as comments.
  legalComments: 'none',
  metafile: true,
  absWorkingDir: ROOT,
  logLevel: 'warning',
})
writeFileSync(
  join(OUT, 'THIRD-PARTY-NOTICES.md'),
  noticesFile('The dutil CLI (dutil.mjs)', bundledPackages(Object.keys(built.metafile.inputs), ROOT)),
)
writeFileSync(join(OUT, 'LICENSE'), readFileSync(join(ROOT, 'LICENSE')))
writeFileSync(
  join(OUT, 'package.json'),
  `${JSON.stringify(
    {
      name: '@dutil/cli',
      version: root.version,
      description: 'The dutil command line: run document utilities as jobs, follow them, manage API keys.',
      license: root.license,
      homepage: root.homepage.replace(/#readme$/, '/tree/main/cli#readme'),
      repository: { ...root.repository, directory: 'cli' },
      bugs: root.bugs,
      type: 'module',
      engines: root.engines,
      bin: { dutil: 'dutil.mjs' },
      files: ['dutil.mjs', 'README.md', 'LICENSE', 'THIRD-PARTY-NOTICES.md'],
    },
    null,
    2,
  )}\n`,
)
writeFileSync(join(OUT, 'README.md'), readFileSync(join(ROOT, 'cli', 'README.md')))
process.stdout.write(`[bundle] the CLI package in ${Math.round(performance.now() - started)} ms\n`)
