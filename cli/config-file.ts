import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { parse, stringify } from 'yaml'

/**
 * The CLI's config file: named contexts, each an API (URL and key) and, for the key and admin
 * commands, a Kubernetes target (kubeconfig, its context, the namespace dutil runs in), in the
 * manner of a kubeconfig. `$DUTIL_CONFIG`, else `$XDG_CONFIG_HOME/dutil/config.yaml`, else
 * `~/.config/dutil/config.yaml`; written with mode 0600 (it holds API keys).
 */
export interface CliContext {
  name: string
  url?: string
  apiKey?: string
  kubeconfig?: string
  kubeContext?: string
  namespace?: string
}

export interface CliConfig {
  currentContext?: string
  contexts: CliContext[]
}

export class ConfigError extends Error {}

/** The file's keys, kebab-case as in a kubeconfig. */
const FIELDS: Array<[keyof Omit<CliContext, 'name'>, string]> = [
  ['url', 'url'],
  ['apiKey', 'api-key'],
  ['kubeconfig', 'kubeconfig'],
  ['kubeContext', 'kube-context'],
  ['namespace', 'namespace'],
]
const MAX_CONFIG_BYTES = 256 * 1024
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DUTIL_CONFIG) return env.DUTIL_CONFIG
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config')
  return join(base, 'dutil', 'config.yaml')
}

/** The config at `path` (an empty one when there is no file); a malformed file is a ConfigError naming it. */
export function readConfig(path: string): CliConfig {
  if (!existsSync(path)) return { contexts: [] }
  if (statSync(path).size > MAX_CONFIG_BYTES) throw new ConfigError(`${path} is larger than 256 KiB`)
  let doc: unknown
  try {
    doc = parse(readFileSync(path, 'utf8'), { maxAliasCount: 0 })
  } catch (err) {
    throw new ConfigError(`${path} is not valid YAML: ${(err as Error).message.split('\n')[0]}`)
  }
  return fromDocument(doc ?? {}, path)
}

export function fromDocument(doc: unknown, path: string): CliConfig {
  const bad = (what: string) => new ConfigError(`${path}: ${what}`)
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw bad('expected a mapping')
  const d = doc as Record<string, unknown>
  const current = d['current-context']
  if (current !== undefined && typeof current !== 'string') throw bad('current-context must be a string')
  const list = d.contexts ?? []
  if (!Array.isArray(list)) throw bad('contexts must be a list')
  const contexts = list.map((raw, i) => {
    if (typeof raw !== 'object' || raw === null) throw bad(`contexts[${i}] must be a mapping`)
    const r = raw as Record<string, unknown>
    if (typeof r.name !== 'string' || !NAME.test(r.name)) throw bad(`contexts[${i}].name must be a context name`)
    const ctx: CliContext = { name: r.name }
    for (const [field, key] of FIELDS) {
      if (r[key] === undefined) continue
      if (typeof r[key] !== 'string') throw bad(`contexts[${i}].${key} must be a string`)
      ctx[field] = r[key]
    }
    return ctx
  })
  return { ...(current ? { currentContext: current } : {}), contexts }
}

export function toDocument(config: CliConfig): Record<string, unknown> {
  return {
    apiVersion: 'dutil.io/v1',
    kind: 'Config',
    ...(config.currentContext ? { 'current-context': config.currentContext } : {}),
    contexts: config.contexts.map((c) => {
      const out: Record<string, string> = { name: c.name }
      for (const [field, key] of FIELDS) if (c[field] !== undefined) out[key] = c[field]
      return out
    }),
  }
}

/** Writes the config readable by its owner only (the directory too), replacing the file in one rename. */
export function writeConfig(path: string, config: CliConfig): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, stringify(toDocument(config)), { mode: 0o600 })
  chmodSync(tmp, 0o600)
  renameSync(tmp, path)
}

/** Adds a context or changes the fields given of an existing one (an empty string removes a field). */
export function setContext(config: CliConfig, name: string, fields: Omit<CliContext, 'name'>): CliConfig {
  if (!NAME.test(name))
    throw new ConfigError(`${JSON.stringify(name)} is not a context name (letters, digits, . _ -; at most 63)`)
  const existing = config.contexts.find((c) => c.name === name) ?? { name }
  const next: CliContext = { ...existing }
  for (const [field] of FIELDS) {
    const v = fields[field]
    if (v === undefined) continue
    if (v === '') delete next[field]
    else next[field] = v
  }
  if (next.url !== undefined) {
    let parsed: URL
    try {
      parsed = new URL(next.url)
    } catch {
      throw new ConfigError(`--url ${JSON.stringify(next.url)} is not a URL`)
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new ConfigError('--url must be an http:// or https:// URL')
  }
  const contexts = config.contexts.some((c) => c.name === name)
    ? config.contexts.map((c) => (c.name === name ? next : c))
    : [...config.contexts, next]
  return { ...config, contexts }
}

export function useContext(config: CliConfig, name: string): CliConfig {
  if (!config.contexts.some((c) => c.name === name))
    throw new ConfigError(`no context ${JSON.stringify(name)} (${known(config)})`)
  return { ...config, currentContext: name }
}

export function deleteContext(config: CliConfig, name: string): CliConfig {
  if (!config.contexts.some((c) => c.name === name))
    throw new ConfigError(`no context ${JSON.stringify(name)} (${known(config)})`)
  const contexts = config.contexts.filter((c) => c.name !== name)
  return config.currentContext === name ? { contexts } : { ...config, contexts }
}

function known(config: CliConfig): string {
  return config.contexts.length ? `known: ${config.contexts.map((c) => c.name).join(', ')}` : 'there are none yet'
}

/** The context a command uses: `$DUTIL_CONTEXT`, else the current one; none when the file has none. */
export function activeContext(config: CliConfig, env: NodeJS.ProcessEnv = process.env): CliContext | undefined {
  const name = env.DUTIL_CONTEXT || config.currentContext
  if (!name) return undefined
  const ctx = config.contexts.find((c) => c.name === name)
  if (!ctx)
    throw new ConfigError(
      `context ${JSON.stringify(name)} (${env.DUTIL_CONTEXT ? 'DUTIL_CONTEXT' : 'current-context'}) is not in the config file`,
    )
  return ctx
}

/** Where the API is and which key calls it: the environment first, then the context. */
export function apiSettings(
  ctx: CliContext | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { url: string; apiKey: string | undefined } {
  return {
    url: env.DUTIL_URL || ctx?.url || 'http://127.0.0.1:8080',
    apiKey: env.DUTIL_API_KEY || ctx?.apiKey,
  }
}

/** A context as shown by `config view`: the key reduced to its public prefix. */
export function redacted(ctx: CliContext): CliContext {
  return ctx.apiKey ? { ...ctx, apiKey: `${ctx.apiKey.slice(0, 16)}…` } : ctx
}
