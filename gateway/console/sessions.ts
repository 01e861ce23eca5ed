import { createHash, randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'

/** Spec: sessions last 14 days of inactivity. */
export const SESSION_IDLE_MS = 14 * 86_400_000
const PENDING_MS = 5 * 60_000

export interface SessionData {
  /** ConsoleUser object name. */
  user: string
  /** Synchronizer token: every state-changing call carries it in X-CSRF-Token. */
  csrf: string
  createdAt: number
  method: 'password' | 'oidc' | 'invite'
}

const digest = (token: string) => createHash('sha256').update(token).digest('hex')
export const newToken = () => randomBytes(32).toString('base64url')

/**
 * Console sessions in Redis (docs/adr/0005). The cookie carries a random id; Redis keeps only
 * its SHA-256, so a copy of Redis signs nobody in. Each request slides the expiry; a set per
 * user lists its sessions for "sign out everywhere" and for disabling an account.
 */
export class SessionStore {
  constructor(private readonly redis: Redis) {}

  private key(id: string) {
    return `console:session:${digest(id)}`
  }
  private userSet(user: string) {
    return `console:user-sessions:${user}`
  }

  async create(
    user: string,
    method: SessionData['method'],
    now = Date.now(),
  ): Promise<{ id: string; data: SessionData }> {
    const id = newToken()
    const data: SessionData = { user, csrf: newToken(), createdAt: now, method }
    await this.redis
      .multi()
      .set(this.key(id), JSON.stringify(data), 'PX', SESSION_IDLE_MS)
      .sadd(this.userSet(user), digest(id))
      .pexpire(this.userSet(user), SESSION_IDLE_MS)
      .exec()
    return { id, data }
  }

  /** The session, its idle expiry pushed back; null when unknown or expired. */
  async touch(id: string): Promise<SessionData | null> {
    if (!/^[\w-]{43}$/.test(id)) return null
    const raw = await this.redis.get(this.key(id))
    if (!raw) return null
    const data = JSON.parse(raw) as SessionData
    await this.redis
      .multi()
      .pexpire(this.key(id), SESSION_IDLE_MS)
      .pexpire(this.userSet(data.user), SESSION_IDLE_MS)
      .exec()
    return data
  }

  async destroy(id: string): Promise<void> {
    const raw = await this.redis.get(this.key(id))
    await this.redis.del(this.key(id))
    if (raw) await this.redis.srem(this.userSet((JSON.parse(raw) as SessionData).user), digest(id))
  }

  /** Ends every session of a user (sign out everywhere, disabling, role changes). */
  async destroyAll(user: string): Promise<number> {
    const ids = await this.redis.smembers(this.userSet(user))
    const multi = this.redis.multi()
    for (const h of ids) multi.del(`console:session:${h}`)
    multi.del(this.userSet(user))
    await multi.exec()
    return ids.length
  }

  /** A password sign-in waiting for its TOTP code (five minutes). */
  async createPending(user: string): Promise<string> {
    const id = newToken()
    await this.redis.set(`console:pending:${digest(id)}`, user, 'PX', PENDING_MS)
    return id
  }

  async readPending(id: string): Promise<string | null> {
    if (!/^[\w-]{43}$/.test(id)) return null
    return this.redis.get(`console:pending:${digest(id)}`)
  }

  async dropPending(id: string): Promise<void> {
    await this.redis.del(`console:pending:${digest(id)}`)
  }

  /** Short-lived values keyed by a token: OIDC state, TOTP enrolment. */
  async putTemp(kind: string, token: string, value: unknown, ttlMs: number): Promise<void> {
    await this.redis.set(`console:${kind}:${digest(token)}`, JSON.stringify(value), 'PX', ttlMs)
  }

  async takeTemp<T>(kind: string, token: string, consume = true): Promise<T | null> {
    const k = `console:${kind}:${digest(token)}`
    const raw = consume ? await this.redis.getdel(k) : await this.redis.get(k)
    return raw ? (JSON.parse(raw) as T) : null
  }

  /** Marks a TOTP time step used; false when it was used already (a replayed code). */
  async claimTotpStep(user: string, step: number): Promise<boolean> {
    return (await this.redis.set(`console:totp-used:${user}:${step}`, '1', 'PX', 5 * 60_000, 'NX')) === 'OK'
  }
}
