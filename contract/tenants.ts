import { createHash } from 'node:crypto'
import type { UtilityJobSpec } from './crd-schemas.js'

/**
 * Tenants: whose objects a runner may reach. A job's tenant is its API key, or one person's
 * console playground; a pool pod serves one tenant for its whole life (docs/adr/0026), and a
 * tenant's jobs and uploads carry its code in their storage keys so that one storage grant can
 * name all of them, and nothing of anyone else's (docs/adr/0049).
 */

/** The isolation tenant of a job: an API key, or one person's console playground. */
export function tenantOf(spec: Pick<UtilityJobSpec, 'apiKeyId' | 'userEmail' | 'source'>): string {
  return spec.apiKeyId ? keyTenant(spec.apiKeyId) : playgroundTenant(spec.userEmail ?? '')
}

/** The tenant of an API key's jobs and uploads. */
export const keyTenant = (keyId: string): string => `key:${keyId}`
/** The tenant of one person's playground runs. */
export const playgroundTenant = (email: string): string => `playground:${email}`

/**
 * The tenant of an upload's owner: an API key's id, or a playground's own owner name (by the
 * person's user id, where its runs go by e-mail: a playground run of its uploads takes a grant of
 * its own).
 */
export function uploadTenant(owner: string): string {
  return owner.startsWith('key_') ? keyTenant(owner) : owner
}

/** Characters of a tenant's code: 40 bits, in the ULID alphabet. */
export const TENANT_CODE_CHARS = 8

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/**
 * A tenant's code (pure): the first 40 bits of the SHA-256 of its name, as 8 Crockford base-32
 * characters. Job ids carry it in their random part (contract/ids.ts), upload keys as a path
 * segment (contract/storage-keys.ts), so a grant's patterns name a tenant's objects by it.
 */
export function tenantCode(tenant: string): string {
  const digest = createHash('sha256').update(`dutil tenant\0${tenant}`).digest()
  let bits = 0n
  for (let i = 0; i < 5; i++) bits = (bits << 8n) | BigInt(digest[i])
  let code = ''
  for (let i = 0; i < TENANT_CODE_CHARS; i++, bits >>= 5n) code = CROCKFORD[Number(bits & 31n)] + code
  return code
}

/** Where a tenant's code sits in a job id (`job_` + 10 characters of time, then the code). */
const JOB_CODE_AT = 'job_'.length + 10

/** The tenant code a job id carries, or null when it carries none it could (not a job id). */
export function codeOfJobId(jobId: string): string | null {
  return /^job_[0-7][0-9A-HJKMNP-TV-Z]{25}$/.test(jobId)
    ? jobId.slice(JOB_CODE_AT, JOB_CODE_AT + TENANT_CODE_CHARS)
    : null
}

/** A ULID with a tenant's code in place of the first 40 bits of its random part. */
export function withTenantCode(ulid: string, code: string): string {
  return `${ulid.slice(0, 10)}${code}${ulid.slice(10 + TENANT_CODE_CHARS)}`
}

/** `?` for each character of a job id but the code: the pattern of a tenant's job ids in a grant. */
export function jobIdPattern(code: string): string {
  return `job_${'?'.repeat(10)}${code}${'?'.repeat(26 - 10 - TENANT_CODE_CHARS)}`
}
