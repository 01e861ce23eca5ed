import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js'
import Type, { type Static, type TObject, type TSchema } from 'typebox'
import { AllowedNetworks } from './address-policy.js'

/**
 * Settings: each program declares every environment variable it reads in one TypeBox schema,
 * read and checked once at start. Unset or empty variables take the schema's default; a value
 * of the wrong kind or out of range stops the program with a message naming each variable that
 * is wrong (never a silent 0 or NaN).
 */
export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid settings: ${problems.join('; ')}`)
    this.name = 'SettingsError'
  }
}

/** Builders for the kinds of setting the programs take (all arrive as strings). */
export const Setting = {
  string: (description: string, opts: { default?: string; pattern?: string; minLength?: number } = {}) =>
    Type.String({ description, ...opts }),
  integer: (description: string, opts: { default?: number; minimum?: number; maximum?: number } = {}) =>
    Type.Integer({ description, ...opts }),
  number: (
    description: string,
    opts: { default?: number; minimum?: number; exclusiveMinimum?: number; maximum?: number } = {},
  ) => Type.Number({ description, ...opts }),
  boolean: (description: string, fallback: boolean) => Type.Boolean({ description, default: fallback }),
  oneOf: <const V extends string[]>(description: string, values: V, fallback: V[number]) =>
    Type.Union(
      values.map((v) => Type.Literal(v)),
      { description, default: fallback },
    ),
  port: (description: string, fallback: number) =>
    Type.Integer({ description, minimum: 1, maximum: 65_535, default: fallback }),
  url: (description: string, opts: { default?: string; schemes?: string[] } = {}) =>
    Type.String({
      description,
      pattern: `^(${(opts.schemes ?? ['http', 'https']).join('|')})://[^\\s]+$`,
      ...(opts.default === undefined ? {} : { default: opts.default }),
    }),
  optional: <T extends TSchema>(schema: T) => Type.Optional(schema),
}

/** The object storage both the gateway and the operator use (spread into their schemas). */
export const STORAGE_SETTINGS = {
  DUTIL_S3_ENDPOINT: Setting.url('Object storage endpoint'),
  DUTIL_S3_PUBLIC_ENDPOINT: Setting.optional(
    Setting.url(
      'Storage address download links (responses and callbacks) are presigned for (default: DUTIL_S3_ENDPOINT)',
    ),
  ),
  DUTIL_S3_REGION: Setting.string('Storage region', { default: 'us-east-1' }),
  DUTIL_S3_BUCKET: Setting.string('Bucket', { default: 'dutil', pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' }),
  DUTIL_S3_ACCESS_KEY: Setting.string('Storage access key', { minLength: 1 }),
  DUTIL_S3_SECRET_KEY: Setting.string('Storage secret key', { minLength: 1 }),
}

/**
 * Tracing and logging, the same for every program (docs/observability.md): spans go to an
 * OTLP/HTTP collector only when DUTIL_TRACING_ENDPOINT is set.
 */
export const OBSERVABILITY_SETTINGS = {
  DUTIL_TRACING_ENDPOINT: Setting.optional(
    Setting.url('OTLP/HTTP address of a trace collector (spans go to <address>/v1/traces); tracing is off when unset'),
  ),
  DUTIL_TRACING_SAMPLE_RATIO: Setting.number(
    'Share of new traces kept (0–1); a continued trace keeps its caller’s choice',
    {
      default: 1,
      minimum: 0,
      maximum: 1,
    },
  ),
  DUTIL_TRACING_SERVICE_PREFIX: Setting.string('Prefix of every program’s service.name (dutil-gateway, …)', {
    default: 'dutil-',
    pattern: '^[a-zA-Z0-9._-]{0,40}$',
  }),
  DUTIL_LOG_LEVEL: Setting.oneOf(
    'Least level logged',
    ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
    'info',
  ),
}

export interface ObservabilityConfig {
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent'
  /** Present when tracing is on. */
  tracing?: { endpoint: string; sampleRatio: number; serviceName: string }
}

/** The observability part of a program's settings; `program` names its service (gateway, operator). */
export function observabilityConfig(
  s: {
    DUTIL_TRACING_ENDPOINT?: string
    DUTIL_TRACING_SAMPLE_RATIO: number
    DUTIL_TRACING_SERVICE_PREFIX: string
    DUTIL_LOG_LEVEL: ObservabilityConfig['logLevel']
  },
  program: string,
): ObservabilityConfig {
  return {
    logLevel: s.DUTIL_LOG_LEVEL,
    ...(s.DUTIL_TRACING_ENDPOINT
      ? {
          tracing: {
            endpoint: s.DUTIL_TRACING_ENDPOINT,
            sampleRatio: s.DUTIL_TRACING_SAMPLE_RATIO,
            serviceName: `${s.DUTIL_TRACING_SERVICE_PREFIX}${program}`,
          },
        }
      : {}),
  }
}

const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: true, useDefaults: true })

/** Names of settings whose value is never echoed (only its length is): keys, secrets, passwords. */
const SECRET_NAME = /SECRET|PASSWORD|TOKEN|ACCESS_KEY/

/**
 * A wrong value as an error may quote it: a secret's only by length; anything else with the
 * password of a URL (`scheme://user:password@host`, also when the URL is malformed) masked.
 */
export function quotable(name: string, raw: string): string {
  if (SECRET_NAME.test(name)) return `a value of ${raw.length} characters`
  const masked = maskPassword(raw)
  return JSON.stringify(masked.length > 60 ? `${masked.slice(0, 60)}…` : masked)
}

/** `user:password@` → `user:***@`, in a URL or something meant to be one. */
function maskPassword(raw: string): string {
  const at = raw.lastIndexOf('@')
  if (at < 0) return raw
  const slashes = raw.lastIndexOf('//', at)
  const colon = raw.indexOf(':', slashes >= 0 ? slashes + 2 : 0)
  if (colon < 0 || colon > at) return raw
  return `${raw.slice(0, colon + 1)}***${raw.slice(at)}`
}

function describe(e: ErrorObject, env: Record<string, string | undefined>): string {
  if (e.keyword === 'required') {
    const name = (e.params as { missingProperty: string }).missingProperty
    return `${name} is required`
  }
  const name = e.instancePath.replace(/^\//, '')
  const raw = env[name]
  const got = raw === undefined ? '' : ` (got ${quotable(name, raw)})`
  if (e.keyword === 'anyOf' || e.keyword === 'const') return `${name} must be one of the allowed values${got}`
  return `${name} ${e.message ?? 'is not valid'}${got}`
}

/** Reads the variables `schema` names from `env`, applies defaults, and checks them all at once. */
export function readSettings<T extends TObject>(schema: T, env: NodeJS.ProcessEnv = process.env): Static<T> {
  const validate = ajv.compile(schema)
  const picked: Record<string, string> = {}
  for (const name of Object.keys(schema.properties)) {
    const v = env[name]?.trim()
    if (v !== undefined && v !== '') picked[name] = v
  }
  const copy: Record<string, unknown> = { ...picked }
  if (!validate(copy)) {
    // One line per variable (a union's "anyOf" error repeats its branches' const errors).
    const perVariable = new Map<string, string>()
    for (const e of validate.errors ?? []) {
      const line = describe(e, picked)
      const name = line.split(' ')[0]
      if (!perVariable.has(name) || line.includes('one of the allowed values')) perVariable.set(name, line)
    }
    throw new SettingsError([...perVariable.values()])
  }
  return copy as Static<T>
}

/**
 * Runs a program's config loader at start; on a SettingsError logs each problem and exits 1,
 * so a bad setting stops the process with the variable named instead of running half-configured.
 */
export function loadOrExit<T>(log: { fatal(obj: object, msg: string): void }, load: () => T): T {
  try {
    return load()
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err
    log.fatal({ problems: err.problems }, 'invalid settings')
    process.stderr.write(`${err.message}\n`)
    process.exit(1)
  }
}

/** A setting that holds a JSON object keyed by `keyedBy` (checked at start; errors name the variable). */
export function jsonObjectSetting(name: string, raw: string, keyedBy: string): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new Error(`${name} must be JSON`)
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error(`${name} must be a JSON object keyed by ${keyedBy}`)
  return parsed as Record<string, unknown>
}

/** A setting that holds comma-separated CIDRs (none: undefined); a malformed entry throws, naming the variable. */
export function cidrSetting(name: string, raw: string | undefined): AllowedNetworks | undefined {
  try {
    return AllowedNetworks.parse(raw)
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}`)
  }
}
