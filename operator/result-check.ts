import type { UtilityJobResource } from '../contract/crd-schemas.js'
import type { RunnerResult } from '../contract/runner-protocol.js'
import { outputKey } from '../contract/storage-keys.js'

/**
 * Bounds of a runner's result manifest the operator accepts. Generous against what the runners
 * produce (unzip-files stores at most 1,000 entries, split-pdf at most 2,000 pages), tight
 * against what the status subresource can hold.
 */
export const RESULT_LIMITS = {
  maxFiles: 2000,
  maxKeyLength: 1024,
  maxNameLength: 512,
  maxExtras: 32,
  maxExtraLength: 1024,
  maxFileBytes: 64 * 1024 ** 3,
} as const

/**
 * Checks the manifest a runner left before any of it reaches the job: a runner parses hostile
 * input and may be compromised, so nothing it says is trusted. Every file must be under the
 * job's own output prefix (`<utility>/<day>/<job_id>/`, no `.`/`..`/empty segments), with sane
 * counts, names and sizes; otherwise the job fails as `internal` (and the reason is logged),
 * so the API never hands out a link to another object. Returns the problem, or null.
 */
export function resultProblem(uj: UtilityJobResource, result: unknown): string | null {
  if (!result || typeof result !== 'object') return 'the manifest is not an object'
  const r = result as Partial<RunnerResult>
  if (!Array.isArray(r.files)) return 'files is not a list'
  if (r.files.length > RESULT_LIMITS.maxFiles) return `${r.files.length} files, more than ${RESULT_LIMITS.maxFiles}`
  const prefix = outputKey(uj.spec.utility, Date.parse(uj.spec.createdAt), uj.spec.jobId, '')
  const seen = new Set<string>()
  for (const [i, f] of r.files.entries()) {
    if (!f || typeof f !== 'object') return `files[${i}] is not an object`
    if (typeof f.key !== 'string' || f.key.length > RESULT_LIMITS.maxKeyLength || !f.key.startsWith(prefix))
      return `files[${i}].key is not under ${prefix}`
    if (
      f.key
        .slice(prefix.length)
        .split('/')
        .some((seg) => seg === '' || seg === '.' || seg === '..') ||
      /[\\\u0000-\u001f]/.test(f.key)
    )
      return `files[${i}].key has a forbidden segment`
    if (seen.has(f.key)) return `files[${i}].key is listed twice`
    seen.add(f.key)
    if (typeof f.name !== 'string' || f.name.length === 0 || f.name.length > RESULT_LIMITS.maxNameLength)
      return `files[${i}].name is not a file name`
    if (f.size !== null && (!Number.isSafeInteger(f.size) || f.size < 0 || f.size > RESULT_LIMITS.maxFileBytes))
      return `files[${i}].size is not a size`
    if (f.contentType !== null && (typeof f.contentType !== 'string' || f.contentType.length > 255))
      return `files[${i}].contentType is not a media type`
    if (f.pageNumber !== undefined && (!Number.isSafeInteger(f.pageNumber) || f.pageNumber < 1))
      return `files[${i}].pageNumber is not a page number`
    if (f.path !== undefined && (typeof f.path !== 'string' || f.path.length > RESULT_LIMITS.maxKeyLength))
      return `files[${i}].path is not a path`
  }
  const extras = r.extras
  if (!extras || typeof extras !== 'object' || Array.isArray(extras)) return 'extras is not an object'
  const entries = Object.entries(extras)
  if (entries.length > RESULT_LIMITS.maxExtras) return `${entries.length} extras, more than ${RESULT_LIMITS.maxExtras}`
  for (const [k, v] of entries) {
    if (k.length > 64) return 'an extras name is too long'
    if (
      !(typeof v === 'number' && Number.isFinite(v)) &&
      !(typeof v === 'string' && v.length <= RESULT_LIMITS.maxExtraLength) &&
      typeof v !== 'boolean'
    )
      return `extras.${k.slice(0, 64)} is not a number, a short string or a boolean`
  }
  for (const t of ['upstreamMs', 'storageMs'] as const) {
    const v = r[t]
    if (!Number.isSafeInteger(v) || (v as number) < 0) return `${t} is not a duration`
  }
  return null
}
