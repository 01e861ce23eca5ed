import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stringify } from 'yaml'
import { crdManifests } from '../contract/crd-manifests.js'
import { openApiDocument } from '../contract/openapi.js'
import { UTILITIES } from './catalog.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const HEADER = '# Generated from contract/ by `npm run generate`. Do not edit by hand.\n'

/** Every generated file and its content. */
export function generatedFiles(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [file, manifest] of Object.entries(crdManifests())) {
    const yaml = HEADER + stringify(manifest, { lineWidth: 0 })
    out[join('crds', file)] = yaml
    // The Helm chart installs the same CRDs (Helm reads them only from the chart's own crds/).
    out[join('charts', 'dutil', 'crds', file)] = yaml
  }
  out[join('docs', 'openapi.yaml')] =
    HEADER + stringify(openApiDocument(UTILITIES), { lineWidth: 0, aliasDuplicateObjects: false })
  return out
}

/** Files whose content on disk differs from what the schemas generate. */
export function drift(): string[] {
  return Object.entries(generatedFiles())
    .filter(([path, content]) => {
      try {
        return readFileSync(join(root, path), 'utf8') !== content
      } catch {
        return true
      }
    })
    .map(([path]) => path)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [path, content] of Object.entries(generatedFiles())) writeFileSync(join(root, path), content)
  console.log('generated', Object.keys(generatedFiles()).join(', '))
}
