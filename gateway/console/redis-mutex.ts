import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { ApiError } from '../api-error.js'

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`

/**
 * A short mutual exclusion across gateway replicas: SET NX PX with a random token, released
 * only by its holder (compare-and-delete in one script). The expiry bounds how long a crashed
 * holder can block others; the guarded work must be far shorter than it.
 */
export class RedisMutex {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs = 10_000,
    private readonly waitMs = 5_000,
  ) {
    redis.defineCommand('dutilMutexRelease', { numberOfKeys: 1, lua: RELEASE })
  }

  /** Runs `work` holding the lock named `key`; refuses (409) after waiting a few seconds for it. */
  async with<T>(key: string, work: () => Promise<T>): Promise<T> {
    const token = randomBytes(16).toString('hex')
    const deadline = Date.now() + this.waitMs
    let delay = 10
    while ((await this.redis.set(key, token, 'PX', this.ttlMs, 'NX')) !== 'OK') {
      if (Date.now() > deadline)
        throw new ApiError('conflict', 'Another change to the same thing is still in progress; try again in a moment.')
      await new Promise((r) => setTimeout(r, delay))
      delay = Math.min(delay * 2, 200)
    }
    try {
      return await work()
    } finally {
      await (this.redis as unknown as { dutilMutexRelease(k: string, t: string): Promise<number> }).dutilMutexRelease(
        key,
        token,
      )
    }
  }
}
