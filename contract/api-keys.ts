import { createHash, randomBytes } from 'node:crypto'

export const KEY_PREFIX = 'du_live_'
export const KEY_PATTERN = /^du_live_[0-9a-f]{48}$/
export const DEFAULT_RATE_LIMIT = 600
export const EXPIRY_DAYS = [30, 90, 365] as const

export function newApiKeyValue(): string {
  return KEY_PREFIX + randomBytes(24).toString('hex')
}

/** What is stored instead of the key: its SHA-256, hex. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** The first 16 characters, kept for recognition. */
export function keyPrefix(key: string): string {
  return key.slice(0, 16)
}

/** Label value that finds a key by hash (labels hold at most 63 characters). */
export function hashLabel(hash: string): string {
  return hash.slice(0, 63)
}

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** Whether a key may call a utility: `*` means all, including utilities added later. */
export function keyAllows(utilities: readonly string[], slug: string): boolean {
  return utilities.includes('*') || utilities.includes(slug)
}

/**
 * The workspace's signing secret, an entry of the signing Secret (platform/secret-entries.ts):
 * it signs console playground runs and the callbacks of keys that have no secret of their own.
 * Made when first needed. Each key's own secret is the entry named after its ApiKey object.
 */
export const WORKSPACE_SIGNING_ENTRY = 'workspace'
/**
 * The entry that signs console playground callbacks: a secret of their own, so that a playground
 * user (an external, say) never receives events signed with a secret a key's receiver trusts.
 */
export const PLAYGROUND_SIGNING_ENTRY = 'playground'
