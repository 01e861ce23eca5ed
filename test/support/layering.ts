import { posix } from 'node:path'
import ts from 'typescript'

/**
 * The layers of docs/architecture.md and what each may import. From the bottom:
 * contract (data: schemas, types, codes, pure functions) ← platform (clients: Kubernetes,
 * storage, PostgreSQL, pinned DNS) ← runners (utility definitions and programs) ← programs
 * (gateway, operator, cli), which reach runners/ only through the catalog (runners/catalog.ts). The typed
 * client and the console's browser code stand alone, sharing only the console API's types with
 * the gateway (gateway/console/ui/api-types.ts, which imports nothing). Tests (test/, *.test.ts)
 * may import anything.
 */
export type Layer =
  'contract' | 'platform' | 'runners' | 'catalog' | 'gateway' | 'operator' | 'cli' | 'clients' | 'ui' | 'console-types'

export const ALLOWED: Record<Layer, readonly Layer[]> = {
  contract: ['contract'],
  platform: ['contract', 'platform'],
  runners: ['contract', 'platform', 'runners', 'catalog'],
  catalog: ['contract', 'runners'],
  gateway: ['contract', 'platform', 'catalog', 'gateway', 'console-types'],
  operator: ['contract', 'platform', 'catalog', 'operator'],
  cli: ['contract', 'platform', 'catalog', 'cli', 'clients'],
  clients: ['clients'],
  ui: ['ui', 'console-types'],
  // The console API's answers as types (gateway/console/ui/api-types.ts): both sides compile it, so it imports nothing.
  'console-types': [],
}

/** Packages that do I/O: contract/ may import their types, never their code. */
export const IO_PACKAGES = [
  '@kubernetes/client-node',
  'minio',
  'pg',
  'ioredis',
  'node-pg-migrate',
  'pino',
  'koa',
  '@koa/router',
  'puppeteer-core',
  'node:http',
  'node:https',
  'node:fs',
  'node:fs/promises',
  'node:dns',
  'node:child_process',
  'node:worker_threads',
]

/** The layer of a repository path, or null for what the rules do not cover (tests, tooling outside the layers). */
export function layerOf(path: string): Layer | null {
  if (path.endsWith('.test.ts') || path.startsWith('test/')) return null
  if (path === 'gateway/console/ui/api-types.ts') return 'console-types'
  if (path.startsWith('gateway/console/ui/')) return 'ui'
  if (path === 'runners/catalog.ts') return 'catalog'
  if (path.startsWith('clients/typescript/src/')) return 'clients'
  const top = path.split('/')[0]
  return (['contract', 'platform', 'runners', 'gateway', 'operator', 'cli'] as const).find((l) => l === top) ?? null
}

interface Import {
  specifier: string
  typeOnly: boolean
}

/** Every module a source file imports or re-exports, static or dynamic, and whether only types. */
export function importsOf(path: string, source: string): Import[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const out: Import[] = []
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ specifier: node.moduleSpecifier.text, typeOnly: !!node.importClause?.isTypeOnly })
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly })
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      out.push({ specifier: node.arguments[0].text, typeOnly: false })
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return out
}

/** Each import that breaks the layering, as "from → to (why)". `files` maps repository paths to sources. */
export function layeringViolations(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = []
  for (const [path, source] of files) {
    const from = layerOf(path)
    if (!from) continue
    for (const { specifier, typeOnly } of importsOf(path, source)) {
      if (specifier.startsWith('.')) {
        const target = posix.normalize(posix.join(posix.dirname(path), specifier)).replace(/\.js$/, '.ts')
        if (target.startsWith('test/')) {
          problems.push(`${path} → ${target} (nothing outside test/ imports test/)`)
          continue
        }
        const to = layerOf(target)
        if (to && !ALLOWED[from].includes(to))
          problems.push(
            `${path} → ${target} (${from} may import ${ALLOWED[from].join(', ') || 'nothing of ours'}; not ${to})`,
          )
      } else if (from === 'contract' && !typeOnly && IO_PACKAGES.includes(specifier)) {
        problems.push(`${path} → ${specifier} (contract/ is data: no I/O package's code)`)
      }
    }
  }
  return problems
}

/**
 * The packages a program loads as it runs: each package (a bare specifier) that a value import
 * reaches from `entry` through the relative imports of our own files, with the chain of files
 * that reaches it first (entry first). `read` gives a repository path's source, undefined for none.
 */
export function packagesLoadedBy(entry: string, read: (path: string) => string | undefined): Map<string, string[]> {
  const found = new Map<string, string[]>()
  const via = new Map<string, string[]>([[entry, [entry]]])
  const queue = [entry]
  while (queue.length > 0) {
    const file = queue.shift()!
    const source = read(file)
    if (source === undefined) continue
    for (const { specifier, typeOnly } of importsOf(file, source)) {
      if (typeOnly || specifier.startsWith('node:')) continue
      if (!specifier.startsWith('.')) {
        if (!found.has(specifier)) found.set(specifier, via.get(file)!)
        continue
      }
      const target = posix.join(posix.dirname(file), specifier.replace(/\.js$/, '.ts'))
      if (via.has(target)) continue
      via.set(target, [...via.get(file)!, target])
      queue.push(target)
    }
  }
  return found
}
