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

/** Data key of the signing secret inside its Secret. */
export const SIGNING_SECRET_KEY = 'signingSecret'

/**
 * The workspace's signing secret: used for keys that have no secret of their own (keys made
 * before per-key secrets, until their secret is rotated). Created by the platform installer
 * and by the CLI when missing.
 */
export const WORKSPACE_SIGNING_SECRET = 'dutil-workspace-signing'

/** Name of the Secret holding a key's own `whsec_` secret (owned by the ApiKey object). */
export function signingSecretNameFor(keyObjectName: string): string {
  return `${keyObjectName}-signing`
}
