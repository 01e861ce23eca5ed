import { cpSync, existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { catalog } from './catalog.js'

/**
 * What a runner image holds of the build (its Dockerfile's build stage runs this after the
 * bundles are made): the bundles of the runners the catalog puts in that image, the packages
 * they load by name at run time (`runner.external`, with the production dependencies those
 * packages need), and package.json (the bundles are ES modules). Nothing else: every runner's bundle already holds the code it imports (docs/adr/0017), so
 * node_modules and the other runners' bundles would only make the image larger.
 *
 *   node dist/runners/image-contents.js <image, e.g. dutil-runner-split-pdf> <out dir>
 */

const ROOT = join(dirname(new URL(import.meta.url).pathname), '..', '..')

/** `names` and every package they depend on (production dependencies), as installed in node_modules. */
export function packageClosure(names: readonly string[], modules: string): string[] {
  const seen = new Set<string>()
  const todo = [...names]
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    if (seen.has(name)) continue
    const manifest = join(modules, name, 'package.json')
    if (!existsSync(manifest)) throw new Error(`${name} is not installed in ${modules}`)
    seen.add(name)
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> }
    todo.push(...Object.keys(pkg.dependencies ?? {}))
  }
  return [...seen].sort()
}

function main(): void {
  const [image, out] = process.argv.slice(2)
  if (!image || !out) throw new Error('usage: image-contents.js <image> <out dir>')
  const runners = [...catalog.values()].filter((u) => u.runner.image === image)
  if (runners.length === 0) throw new Error(`no runner of the catalog runs in ${image}`)
  for (const u of runners) {
    const bundle = dirname(u.runner.entry)
    cpSync(join(ROOT, bundle), join(out, bundle), { recursive: true })
  }
  const external = [...new Set(runners.flatMap((u) => u.runner.external ?? []))]
  for (const name of packageClosure(external, join(ROOT, 'node_modules')))
    cpSync(join(ROOT, 'node_modules', name), join(out, 'node_modules', name), { recursive: true })
  cpSync(join(ROOT, 'package.json'), join(out, 'package.json'))
  process.stdout.write(
    `[image-contents] ${image}: ${runners.map((u) => u.slug).join(', ')}${external.length ? `; packages ${external.join(', ')}` : ''}\n`,
  )
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) main()
