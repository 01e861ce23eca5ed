import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'

/** Spec: ten failed passwords for one e-mail from one address, or fifty overall, lock it for 15 minutes. */
export const LOCKOUT = { perAddress: 10, overall: 50, windowMs: 15 * 60_000, lockMs: 15 * 60_000 } as const

/**
 * One round trip, atomic: refuses while locked; otherwise takes one attempt from both budgets
 * (per address, per e-mail) and refuses, locking, when either is spent. Returns
 * {0, lockMs} when refused, {1, pairCount, overallCount} when the attempt may be checked.
 * KEYS: pair, overall, lock. ARGV: window ms, lock ms, per-address limit, overall limit.
 */
const ATTEMPT = `
local locked = redis.call('PTTL', KEYS[3])
if locked > 0 then return {0, locked} end
local pair = redis.call('INCR', KEYS[1])
if pair == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local overall = redis.call('INCR', KEYS[2])
if overall == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
if pair > tonumber(ARGV[3]) or overall > tonumber(ARGV[4]) then
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[2])
  redis.call('DEL', KEYS[1], KEYS[2])
  return {0, tonumber(ARGV[2])}
end
return {1, pair, overall}`

/** A correct answer gives its attempt back: the address's count is cleared, the overall one keeps only failures. */
const SUCCEED = `
redis.call('DEL', KEYS[1])
local n = tonumber(redis.call('GET', KEYS[2]) or '0')
if n > 0 then redis.call('DECR', KEYS[2]) end
return 0`

export type Attempt = { allowed: false; lockedForMs: number } | { allowed: true; pair: number; overall: number }

/** A failed attempt that reached either limit locks the e-mail now (not only at the next try). */
export function failureLocks(a: { pair: number; overall: number }): boolean {
  return a.pair >= LOCKOUT.perAddress || a.overall >= LOCKOUT.overall
}

interface LockoutCommands {
  dutilConsoleAttempt(
    pair: string,
    overall: string,
    lock: string,
    windowMs: number,
    lockMs: number,
    perAddress: number,
    overallLimit: number,
  ): Promise<number[]>
  dutilConsoleSucceed(pair: string, overall: string): Promise<number>
}

/**
 * Failed sign-in counters in Redis. Every password or code check first takes an attempt in one
 * atomic script, before the secret is checked, so concurrent guesses cannot all pass a
 * "not locked yet" read: at most ten checks per (e-mail, address) and fifty per e-mail happen in
 * a 15-minute window, however many arrive at once. Reaching either limit locks that e-mail for
 * 15 minutes, whatever the secret. Addresses are counted for unknown e-mails too, so a lock says
 * nothing about whether an account exists.
 */
export class Lockout {
  private readonly commands: LockoutCommands

  constructor(private readonly redis: Redis) {
    redis.defineCommand('dutilConsoleAttempt', { numberOfKeys: 3, lua: ATTEMPT })
    redis.defineCommand('dutilConsoleSucceed', { numberOfKeys: 2, lua: SUCCEED })
    this.commands = redis as unknown as LockoutCommands
  }

  private ids(email: string, ip: string) {
    const e = createHash('sha256').update(email).digest('hex').slice(0, 32)
    const a = createHash('sha256').update(ip).digest('hex').slice(0, 16)
    return { pair: `console:fail:${e}:${a}`, overall: `console:fail:${e}`, lock: `console:lock:${e}` }
  }

  /** Takes one attempt for this e-mail from this address, or says how long it stays locked. */
  async attempt(email: string, ip: string): Promise<Attempt> {
    const k = this.ids(email, ip)
    const [ok, a, b] = await this.commands.dutilConsoleAttempt(
      k.pair,
      k.overall,
      k.lock,
      LOCKOUT.windowMs,
      LOCKOUT.lockMs,
      LOCKOUT.perAddress,
      LOCKOUT.overall,
    )
    return ok === 1 ? { allowed: true, pair: a, overall: b } : { allowed: false, lockedForMs: a }
  }

  /** The attempt failed: locks the e-mail when it used up a budget; returns the lock time, or 0. */
  async failed(email: string, ip: string, attempt: { pair: number; overall: number }): Promise<number> {
    if (!failureLocks(attempt)) return 0
    const k = this.ids(email, ip)
    await this.redis.multi().set(k.lock, '1', 'PX', LOCKOUT.lockMs).del(k.pair, k.overall).exec()
    return LOCKOUT.lockMs
  }

  /**
   * Takes an attempt, runs `verify` only when one was granted, and books the outcome: 'ok', or
   * 'wrong', or the milliseconds the e-mail is locked for (already locked, or locked by this failure).
   */
  async check(
    email: string,
    ip: string,
    verify: () => Promise<boolean>,
  ): Promise<'ok' | 'wrong' | { lockedForMs: number }> {
    const a = await this.attempt(email, ip)
    if (!a.allowed) return { lockedForMs: a.lockedForMs }
    if (await verify()) {
      await this.succeed(email, ip)
      return 'ok'
    }
    const lockedForMs = await this.failed(email, ip, a)
    return lockedForMs ? { lockedForMs } : 'wrong'
  }

  /** The attempt succeeded: clears that address's failures and gives the attempt back overall. */
  async succeed(email: string, ip: string): Promise<void> {
    const k = this.ids(email, ip)
    await this.commands.dutilConsoleSucceed(k.pair, k.overall)
  }
}
