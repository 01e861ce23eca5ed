/**
 * A utility's secret input fields (passwords): the properties its input schema marks
 * `writeOnly` (JSON Schema's keyword for a value that is sent and never given back). They are
 * sealed before the input is stored and opened only in the runner's memory
 * (docs/adr/0042-sealed-input-secrets.md). Pure; found once per utility from its schema.
 */

/** Where a secret sits in an input: the property names from its root (objects only, no arrays). */
export type SecretPath = readonly string[]

interface SchemaNode {
  writeOnly?: boolean
  properties?: Record<string, SchemaNode>
  anyOf?: SchemaNode[]
  oneOf?: SchemaNode[]
  allOf?: SchemaNode[]
}

/** Every property path of `schema` marked writeOnly (looking through objects and unions, never into arrays). */
export function secretPathsOf(schema: unknown, depth = 0): SecretPath[] {
  const node = schema as SchemaNode | null
  if (!node || typeof node !== 'object' || depth > 16) return []
  const out: SecretPath[] = []
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    if (child && typeof child === 'object' && child.writeOnly === true) out.push([name])
    else for (const p of secretPathsOf(child, depth + 1)) out.push([name, ...p])
  }
  for (const branch of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])])
    for (const p of secretPathsOf(branch, depth + 1)) if (!out.some((q) => q.join('\0') === p.join('\0'))) out.push(p)
  return out
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The object holding a path's last property, when every step to it is an object. */
function parentOf(root: unknown, path: readonly string[]): Record<string, unknown> | undefined {
  let parent: unknown = root
  for (const name of path.slice(0, -1)) parent = isObject(parent) ? parent[name] : undefined
  return isObject(parent) ? parent : undefined
}

/**
 * `input` without its secrets, and the secrets taken out (each by its path joined with "."), or
 * no secrets when it holds none. Pure: `input` is not changed.
 */
export function splitSecrets(
  input: unknown,
  paths: readonly SecretPath[],
): { rest: unknown; secrets: Record<string, string> | null } {
  if (!paths.length || !isObject(input)) return { rest: input, secrets: null }
  const secrets: Record<string, string> = {}
  const rest = structuredClone(input)
  for (const path of paths) {
    const parent = parentOf(rest, path)
    const last = path[path.length - 1]!
    if (!parent || typeof parent[last] !== 'string') continue
    secrets[path.join('.')] = parent[last] as string
    delete parent[last]
  }
  return { rest, secrets: Object.keys(secrets).length ? secrets : null }
}

/** `rest` with `secrets` put back where splitSecrets took them from (a path whose parent is gone is dropped). */
export function joinSecrets(rest: unknown, secrets: Record<string, string>): unknown {
  if (!isObject(rest)) return rest
  const out = structuredClone(rest)
  for (const [joined, value] of Object.entries(secrets)) {
    const path = joined.split('.')
    const parent = parentOf(out, path)
    if (parent) parent[path[path.length - 1]!] = value
  }
  return out
}
