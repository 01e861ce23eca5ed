import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, sep } from 'node:path'

/** A package whose code is inside a bundle: what its licence requires the bundle to carry. */
export interface BundledPackage {
  name: string
  version: string
  license: string
  /** Its licence file(s) as the package ships them; empty when it ships none. */
  texts: Array<{ file: string; text: string }>
}

const LICENSE_FILE = /^(licen[cs]e|copying|notice)([.-].*)?$/i

/** The package directory an input of the bundle came from (`…/node_modules/<name>` or `…/node_modules/@s/<name>`), if any. */
export function packageDirOf(input: string): string | null {
  const parts = input.split(/[\\/]/)
  const at = parts.lastIndexOf('node_modules')
  if (at < 0 || at + 1 >= parts.length) return null
  const take = parts[at + 1].startsWith('@') ? 3 : 2
  return parts.slice(0, at + take).join(sep)
}

/**
 * The packages inside a bundle, from its inputs (esbuild's metafile), with their licence files:
 * MIT, ISC, BSD and Apache-2.0 all ask that the notice travels with the code.
 */
export function bundledPackages(inputs: string[], root: string): BundledPackage[] {
  const dirs = new Set(inputs.map(packageDirOf).filter((d): d is string => d !== null))
  const out: BundledPackage[] = []
  for (const dir of dirs) {
    const abs = join(root, dir)
    const pkg = JSON.parse(readFileSync(join(abs, 'package.json'), 'utf8')) as {
      name: string
      version: string
      license?: string | { type?: string }
    }
    const files = existsSync(abs) ? readdirSync(abs).filter((f) => LICENSE_FILE.test(f)) : []
    out.push({
      name: pkg.name,
      version: pkg.version,
      license: typeof pkg.license === 'string' ? pkg.license : (pkg.license?.type ?? 'UNKNOWN'),
      texts: files.sort().map((file) => ({ file, text: readFileSync(join(abs, file), 'utf8').trim() })),
    })
  }
  return out.sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version))
}

/** THIRD-PARTY-NOTICES.md: each bundled package, its licence, and its licence files' text. */
export function noticesFile(product: string, packages: BundledPackage[]): string {
  const lines = [
    '# Third-party notices',
    '',
    `${product} includes the following packages. Each is listed with its licence and the licence`,
    'text it ships.',
    '',
  ]
  for (const p of packages) {
    lines.push(`## ${p.name} ${p.version} (${p.license})`, '')
    if (!p.texts.length) lines.push(`The package ships no licence file; its package.json declares ${p.license}.`, '')
    for (const t of p.texts) lines.push('```text', t.text, '```', '')
  }
  return `${lines.join('\n').trimEnd()}\n`
}
