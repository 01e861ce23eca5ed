import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stringify } from 'yaml'
import { crdManifests } from '../contract/crd-manifests.js'
import { openApiDocument } from '../contract/openapi.js'
import { UTILITIES } from './catalog.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const HEADER = '# Generated from contract/ by `npm run generate`. Do not edit by hand.\n'

const HELM_HEADER =
  '{{- /* Generated from contract/ by `npm run generate`, the same CRDs as crds/. Do not edit by hand. */}}\n'

/** One CRD as a chart template: the chart's labels, and kept at uninstall while crds.keep is on. */
function chartCrd(name: string, yaml: string): string {
  const metadata = `metadata:\n  name: ${name}\n  labels:\n    app.kubernetes.io/part-of: dutil\n`
  if (!yaml.includes(metadata)) throw new Error(`the CRD ${name} has unexpected metadata`)
  return (
    '---\n' +
    yaml.replace(
      metadata,
      `metadata:\n  name: ${name}\n  labels:\n    {{- include "dutil.labels" . | nindent 4 }}\n` +
        '  {{- if .Values.crds.keep }}\n  annotations:\n    helm.sh/resource-policy: keep\n  {{- end }}\n',
    )
  )
}

/** Every generated file and its content. */
export function generatedFiles(): Record<string, string> {
  const out: Record<string, string> = {}
  const chartCrds: string[] = []
  for (const [file, manifest] of Object.entries(crdManifests())) {
    const yaml = stringify(manifest, { lineWidth: 0 })
    out[join('crds', file)] = HEADER + yaml
    chartCrds.push(chartCrd(manifest.metadata.name, yaml))
  }
  // The chart renders the same CRDs as templates, so `helm upgrade` applies their changes
  // (Helm never upgrades what sits in a chart's crds/ folder).
  out[join('charts', 'dutil', 'templates', 'crds.yaml')] =
    HELM_HEADER + '{{- if .Values.crds.install }}\n' + chartCrds.join('') + '{{- end }}\n'
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
