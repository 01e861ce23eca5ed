import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'

/** Spec: ten failed passwords for one e-mail from one address, or fifty overall, lock it for 15 minutes. */
export const LOCKOUT = { perAddress: 10, overall: 50, windowMs: 15 * 60_000, lockMs: 15 * 60_000 } as const

const COUNT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`

/**
 * Failed-password counters in Redis. Failures are counted per (e-mail, address) and per e-mail
 * in a 15-minute window from the first failure; reaching either limit locks password sign-in
 * for that e-mail for 15 minutes, whatever the password. Addresses are counted for unknown
 * e-mails too, so a lock says nothing about whether an account exists.
 */
export class Lockout {
  constructor(private readonly redis: Redis) {
    redis.defineCommand('dutilConsoleCount', { numberOfKeys: 1, lua: COUNT })
  }

  private ids(email: string, ip: string) {
    const e = createHash('sha256').update(email).digest('hex').slice(0, 32)
    const a = createHash('sha256').update(ip).digest('hex').slice(0, 16)
    return { pair: `console:fail:${e}:${a}`, overall: `console:fail:${e}`, lock: `console:lock:${e}` }
  }

  /** Milliseconds the e-mail stays locked, or 0. */
  async lockedFor(email: string): Promise<number> {
    const ttl = await this.redis.pttl(this.ids(email, '').lock)
    return ttl > 0 ? ttl : 0
  }

  /** Counts a failure; returns the lock time when this failure locked the e-mail. */
  async fail(email: string, ip: string): Promise<number> {
    const k = this.ids(email, ip)
    const count = (key: string) => (this.redis as unknown as { dutilConsoleCount(k: string, ttl: number): Promise<number> }).dutilConsoleCount(key, LOCKOUT.windowMs)
    const [pair, overall] = await Promise.all([count(k.pair), count(k.overall)])
    if (pair >= LOCKOUT.perAddress || overall >= LOCKOUT.overall) {
      await this.redis.multi().set(k.lock, '1', 'PX', LOCKOUT.lockMs).del(k.pair, k.overall).exec()
      return LOCKOUT.lockMs
    }
    return 0
  }

  /** A successful sign-in clears that address's failures (not the overall count). */
  async succeed(email: string, ip: string): Promise<void> {
    await this.redis.del(this.ids(email, ip).pair)
  }
}
