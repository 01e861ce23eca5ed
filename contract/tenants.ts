import { createHash } from 'node:crypto'
import type { UtilityJobSpec } from './crd-schemas.js'
import { CROCKFORD, TENANT_CODE_CHARS } from './ids.js'

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

/**
 * A tenant's code (pure): the first 40 bits of the SHA-256 of its name, as 8 Crockford base-32
 * characters. Job ids carry it in their random part (contract/ids.ts jobIdPattern), upload keys as a path
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
