import { requestLogFields, type RequestLogFields } from './request-id.js'
import type { Redis } from 'ioredis'
import type { Context, Next } from 'koa'
import type { Logger } from 'pino'
import { ApiError } from './api-error.js'
import type { AuthenticatedKey } from './auth.js'

export const WINDOW_MS = 60_000

/** One atomic step: count this request in the key's current window and report the window's age. */
const SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`

export interface WindowCount {
  count: number
  resetMs: number
}

export class RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
  ) {
    redis.defineCommand('dutilCount', { numberOfKeys: 1, lua: SCRIPT })
  }

  /** Counts one request in a fixed window (one minute unless told); null when Redis cannot be reached. */
  async hit(keyId: string, now: number, request?: RequestLogFields, windowMs = WINDOW_MS): Promise<WindowCount | null> {
    const windowStart = now - (now % windowMs)
    try {
      const count = (await (
        this.redis as unknown as { dutilCount(k: string, ttl: number): Promise<number> }
      ).dutilCount(`rl:${keyId}:${windowStart}`, windowMs + 1000)) as number
      return { count, resetMs: windowStart + windowMs - now }
    } catch (err) {
      this.log.warn({ err: (err as Error).message, ...request }, 'rate limiter unavailable, request allowed')
      return null
    }
  }
}

/**
 * Fixed-window rate limit per key over every authenticated /v1 request. While Redis is down
 * requests are allowed (fail open) and no RateLimit-Remaining is claimed: see docs/adr/0003.
 */
export function rateLimit(limiter: RateLimiter) {
  return async (ctx: Context, next: Next) => {
    const key = ctx.state.key as AuthenticatedKey
    const result = await limiter.hit(key.id, Date.now(), requestLogFields(ctx))
    ctx.set('RateLimit-Limit', String(key.rateLimitPerMinute))
    if (result) {
      const resetSeconds = Math.max(1, Math.ceil(result.resetMs / 1000))
      ctx.set('RateLimit-Remaining', String(Math.max(0, key.rateLimitPerMinute - result.count)))
      ctx.set('RateLimit-Reset', String(resetSeconds))
      if (result.count > key.rateLimitPerMinute) {
        throw new ApiError(
          'rate_limited',
          `Rate limit of ${key.rateLimitPerMinute} requests per minute exceeded.`,
          undefined,
          { 'Retry-After': String(resetSeconds) },
        )
      }
    }
    await next()
  }
}
