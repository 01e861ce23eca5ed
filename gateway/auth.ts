import type { Context, Next } from 'koa'
import { hashApiKey, KEY_PATTERN } from '../contract/api-keys.js'
import type { ApiKeyResource } from '../contract/crd-schemas.js'
import { keyOwner } from '../contract/owners.js'
import { parseTime } from '../contract/time.js'
import { ApiError } from './api-error.js'
import type { KeyRegistry } from './key-registry.js'
import type { KeyUsage } from './key-usage.js'

export interface AuthenticatedKey {
  id: string
  name: string
  objectName: string
  utilities: string[]
  rateLimitPerMinute: number
  /** Whom its jobs count against (contract/owners.ts). */
  owner: string
}

const challenge = (error?: string) => ({ 'WWW-Authenticate': error ? `Bearer error="${error}"` : 'Bearer' })

/** Checks a key resource presented at `now`; throws docs/api.md's 401 for revoked and expired keys. */
export function checkKeyUsable(key: ApiKeyResource, now: number): AuthenticatedKey {
  if (key.spec.revokedAt)
    throw new ApiError('unauthorized', 'This API key has been revoked.', undefined, challenge('invalid_token'))
  const expires = parseTime(key.spec.expiresAt)
  if (expires !== null && expires <= now)
    throw new ApiError('unauthorized', 'This API key has expired.', undefined, challenge('invalid_token'))
  return {
    id: key.spec.keyId,
    name: key.spec.name,
    objectName: key.metadata.name,
    utilities: key.spec.utilities,
    rateLimitPerMinute: key.spec.rateLimitPerMinute,
    owner: keyOwner(key.spec),
  }
}

/** Bearer authentication against ApiKey resources; sets ctx.state.key. */
export function authenticate(registry: KeyRegistry, usage?: KeyUsage) {
  return async (ctx: Context, next: Next) => {
    const header = ctx.get('Authorization')
    const m = /^Bearer (\S+)$/.exec(header)
    if (!m)
      throw new ApiError(
        'unauthorized',
        'Send your API key as Authorization: Bearer <API_KEY>.',
        undefined,
        challenge(),
      )
    const key = KEY_PATTERN.test(m[1]) ? await registry.find(hashApiKey(m[1])) : undefined
    if (!key) throw new ApiError('unauthorized', 'The API key is not valid.', undefined, challenge('invalid_token'))
    ctx.state.key = checkKeyUsable(key, Date.now())
    usage?.touch(key.spec.keyId, key.metadata.name)
    await next()
  }
}
