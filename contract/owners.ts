import type { ApiKeySpec, UtilityJobSpec } from './crd-schemas.js'

/**
 * Owners: whose jobs count together for the fair shares of run slots and for the queued-job
 * ceilings. A person's console keys and their playground runs are one owner (the person, by
 * e-mail); a key made with the CLI or by the chart is an owner of its own unless it names one
 * (`owner`), so a platform team gives each application its own share. The owner of a job is
 * decided when it is accepted and kept in its spec and its row.
 */

/** The owner a name stands for: a person (by e-mail, any case) or a name an admin gave. */
export function namedOwner(name: string): string {
  return `owner:${name.trim().toLowerCase()}`
}

/** The owner of the jobs an API key starts. */
export function keyOwner(spec: Pick<ApiKeySpec, 'keyId' | 'owner' | 'createdBy'>): string {
  if (spec.owner) return namedOwner(spec.owner)
  if (spec.createdBy?.email) return namedOwner(spec.createdBy.email)
  return `key:${spec.keyId}`
}

/** The owner of a job: the one recorded at accept, or (jobs accepted before owners) its key's or person's. */
export function ownerOfJob(spec: Pick<UtilityJobSpec, 'owner' | 'apiKeyId' | 'userEmail'>): string {
  if (spec.owner) return spec.owner
  if (spec.apiKeyId) return `key:${spec.apiKeyId}`
  return namedOwner(spec.userEmail ?? '')
}
