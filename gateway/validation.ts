import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import { catalog } from '../runners/catalog.js'
import { METADATA_LIMITS, runRequestSchema } from '../contract/request-schemas.js'
import type { UtilityDefinition } from '../contract/utility.js'
import { invalid, type ErrorDetail } from './api-error.js'

export type RunMode = 'sync' | 'async'
const MODES: readonly RunMode[] = ['sync', 'async']

/**
 * Every utility's request validator for both run modes, compiled once when the gateway starts.
 * A request only looks one up: Ajv keeps every function it compiles, so compiling per request
 * grows memory without bound (and costs ~100 ms a time).
 */
const validators: ReadonlyMap<string, ValidateFunction> = (() => {
  const ajv = new Ajv2020({ allErrors: true, strict: false })
  const map = new Map<string, ValidateFunction>()
  for (const u of catalog.values())
    for (const mode of MODES) map.set(validatorKey(u.slug, mode), ajv.compile(runRequestSchema(u, mode)))
  return map
})()

function validatorKey(slug: string, mode: RunMode): string {
  return `${slug}\u0000${mode}`
}

/** The compiled validator of one utility's run request; the same function every time. */
export function runRequestValidator(utility: UtilityDefinition, mode: RunMode): ValidateFunction {
  const fn = validators.get(validatorKey(utility.slug, mode))
  if (!fn) throw new Error(`no request validator for ${utility.slug} (${mode}): not in the catalog`)
  return fn
}

/** `/input/files/2/fileName` → `input.files.2.fileName`; the whole body is `(root)`. */
export function dottedPath(pointer: string, child?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
  if (child !== undefined) parts.push(child)
  return parts.length ? parts.join('.') : '(root)'
}

/** A human sentence for one schema violation. */
export function describeError(e: ErrorObject): ErrorDetail {
  const p = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'required':
      return { path: dottedPath(e.instancePath, String(p.missingProperty)), message: 'is required' }
    case 'additionalProperties':
      return { path: dottedPath(e.instancePath, String(p.additionalProperty)), message: 'is not an allowed field' }
    case 'maxLength':
      return { path: dottedPath(e.instancePath), message: `must be at most ${p.limit} characters` }
    case 'minLength':
      return { path: dottedPath(e.instancePath), message: `must be at least ${p.limit} characters` }
    case 'maxProperties':
      return { path: dottedPath(e.instancePath), message: `must have at most ${p.limit} keys` }
    case 'maxItems':
      return { path: dottedPath(e.instancePath), message: `must have at most ${p.limit} items` }
    case 'minItems':
      return { path: dottedPath(e.instancePath), message: `must have at least ${p.limit} items` }
    case 'propertyNames':
      return {
        path: dottedPath(e.instancePath, String(p.propertyName)),
        message: `key names must be at most ${METADATA_LIMITS.maxKeyLength} characters`,
      }
    case 'pattern': {
      const described = (e.parentSchema as { description?: string } | undefined)?.description
      return {
        path: dottedPath(e.instancePath),
        message: described
          ? `must be ${described.charAt(0).toLowerCase()}${described.slice(1).replace(/\.$/, '')}`
          : 'has the wrong format',
      }
    }
    case 'type':
      return {
        path: dottedPath(e.instancePath),
        message: `must be ${p.type === 'integer' ? 'an integer' : `a${/^[aeiou]/.test(String(p.type)) ? 'n' : ''} ${p.type}`}`,
      }
    case 'const':
    case 'enum':
    case 'anyOf':
      return { path: dottedPath(e.instancePath), message: 'is not one of the allowed values' }
    default:
      return { path: dottedPath(e.instancePath), message: e.message ?? 'is invalid' }
  }
}

/** De-duplicated details, the anyOf noise of literal unions folded into one line per path. */
function details(errors: ErrorObject[]): ErrorDetail[] {
  const seen = new Map<string, ErrorDetail>()
  for (const e of errors) {
    if (e.keyword === 'const' && errors.some((o) => o.keyword === 'anyOf' && o.instancePath === e.instancePath))
      continue
    // A key name's own violation is reported once, by its propertyNames error.
    if (e.keyword !== 'propertyNames' && (e as ErrorObject & { propertyName?: string }).propertyName !== undefined)
      continue
    const d = describeError(e)
    const k = `${d.path}\u0000${d.message}`
    if (!seen.has(k)) seen.set(k, d)
  }
  return [...seen.values()]
}

/** Validates a run request body; throws 400 `invalid_request` with details on any problem. */
export function validateRunRequest(body: unknown, utility: UtilityDefinition, mode: RunMode): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid('The request body must be a JSON object.', [{ path: '(root)', message: 'must be an object' }])
  }
  const fn = runRequestValidator(utility, mode)
  if (!fn(body)) throw invalid('The request is not valid.', details(fn.errors ?? []))
  const problems: ErrorDetail[] = []
  const metadata = (body as { metadata?: unknown }).metadata
  if (metadata !== undefined && Buffer.byteLength(JSON.stringify(metadata)) > METADATA_LIMITS.maxBytes) {
    problems.push({ path: 'metadata', message: `must be at most ${METADATA_LIMITS.maxBytes} bytes when serialised` })
  }
  for (const p of utility.checkInput?.((body as { input: unknown }).input) ?? []) {
    problems.push({ path: p.path ? `input.${p.path}` : 'input', message: p.message })
  }
  if (problems.length) throw invalid('The request is not valid.', problems)
}
