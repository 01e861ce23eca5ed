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
export function checkKeyUsable(
  key: ApiKeyResource,
  now: number,
  presentation: Pick<KeyPresentation, 'challenge'> = BEARER,
): AuthenticatedKey {
  if (key.spec.revokedAt)
    throw new ApiError(
      'unauthorized',
      'This API key has been revoked.',
      undefined,
      presentation.challenge('invalid_token'),
    )
  const expires = parseTime(key.spec.expiresAt)
  if (expires !== null && expires <= now)
    throw new ApiError('unauthorized', 'This API key has expired.', undefined, presentation.challenge('invalid_token'))
  return {
    id: key.spec.keyId,
    name: key.spec.name,
    objectName: key.metadata.name,
    utilities: key.spec.utilities,
    rateLimitPerMinute: key.spec.rateLimitPerMinute,
    owner: keyOwner(key.spec),
  }
}

/** How a request presents its key, and the challenge a 401 carries. */
export interface KeyPresentation {
  /** The key the request presents, or undefined when it presents none the way this asks. */
  read(ctx: Context): string | undefined
  /** The 401 answer's message when no key is presented. */
  missing: string
  challenge(error?: string): Record<string, string>
}

/** The API's way: `Authorization: Bearer <API_KEY>`. */
export const BEARER: KeyPresentation = {
  read: (ctx) => /^Bearer (\S+)$/.exec(ctx.get('Authorization'))?.[1],
  missing: 'Send your API key as Authorization: Bearer <API_KEY>.',
  challenge,
}

/** Authentication against ApiKey resources; sets ctx.state.key. */
export function authenticate(registry: KeyRegistry, usage?: KeyUsage, presentation: KeyPresentation = BEARER) {
  return async (ctx: Context, next: Next) => {
    const presented = presentation.read(ctx)
    if (presented === undefined)
      throw new ApiError('unauthorized', presentation.missing, undefined, presentation.challenge())
    const key = KEY_PATTERN.test(presented) ? await registry.find(hashApiKey(presented)) : undefined
    if (!key)
      throw new ApiError(
        'unauthorized',
        'The API key is not valid.',
        undefined,
        presentation.challenge('invalid_token'),
      )
    ctx.state.key = checkKeyUsable(key, Date.now(), presentation)
    usage?.touch(key.spec.keyId, key.metadata.name)
    await next()
  }
}
