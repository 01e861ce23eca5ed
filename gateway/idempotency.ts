import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { LABELS } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { invalid } from './api-error.js'
import type { JobStore } from './job-store.js'

import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../contract/limits.js'

/** The Idempotency-Key header: absent, or 1 to 200 characters (an empty one is refused, not ignored). */
export function readIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (Array.isArray(header) || header === '' || header.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw invalid('Idempotency-Key must be 1 to 200 characters.', [{ path: 'Idempotency-Key', message: 'must be 1 to 200 characters' }])
  }
  return header
}

/** Scope hash of an Idempotency-Key: per API key, 40 hex characters so it fits a label. */
export function idempotencyHash(apiKeyId: string, idempotencyKey: string): string {
  return createHash('sha256').update(`${apiKeyId}\n${idempotencyKey}`).digest('hex').slice(0, 40)
}

export type Claim = { kind: 'claimed' } | { kind: 'existing'; job: UtilityJobResource }

/**
 * Makes "one Idempotency-Key, one job" hold. Redis `SET NX` decides races between concurrent
 * requests; the label on the UtilityJob itself is the durable record, so a Redis flush or
 * restart never lets a retry run twice (the label is checked before claiming anew).
 */
export class Idempotency {
  constructor(
    private readonly redis: Redis,
    private readonly store: JobStore,
    private readonly retentionMs: number,
    private readonly log: Logger,
  ) {}

  private async durable(hash: string): Promise<UtilityJobResource | undefined> {
    const [job] = await this.store.listByLabel(`${LABELS.idempotency}=${hash}`)
    return job
  }

  /** The job an earlier request with this key made, if any. */
  async find(hash: string): Promise<UtilityJobResource | undefined> {
    const durable = await this.durable(hash)
    if (durable) return durable
    try {
      const name = await this.redis.get(`idem:${hash}`)
      return name ? await this.waitForJob(name, hash, 50) : undefined
    } catch {
      return undefined
    }
  }

  private async waitForJob(name: string, hash: string, tries: number): Promise<UtilityJobResource | undefined> {
    for (let i = 0; i < tries; i++) {
      const job = (await this.store.get(name)) ?? (await this.durable(hash))
      if (job) return job
      await new Promise((r) => setTimeout(r, 100))
    }
    return undefined
  }

  /** Claims the key for a new job named `jobName`, or hands back the job that holds it. */
  async claim(hash: string, jobName: string): Promise<Claim> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const durable = await this.durable(hash)
      if (durable) return { kind: 'existing', job: durable }
      let winner: string | null
      try {
        const set = await this.redis.set(`idem:${hash}`, jobName, 'PX', this.retentionMs, 'NX')
        winner = set === 'OK' ? jobName : await this.redis.get(`idem:${hash}`)
      } catch (err) {
        // Without Redis the durable check above is all there is; concurrent first requests may race.
        this.log.warn({ err: (err as Error).message }, 'idempotency store unavailable, using the durable record only')
        return { kind: 'claimed' }
      }
      if (winner === jobName || winner === null) return { kind: 'claimed' }
      // Another request holds the key: its job appears within moments of its claim.
      const job = await this.waitForJob(winner, hash, 50)
      if (job) return { kind: 'existing', job }
      // A claim whose job never came (its request failed before creating it): clear it, try again.
      await this.release(hash, winner)
    }
    throw new Error('idempotency claim could not be settled')
  }

  /** Gives a claim back when creating the job failed, so a retry can run. */
  async release(hash: string, jobName: string): Promise<void> {
    try {
      if ((await this.redis.get(`idem:${hash}`)) === jobName) await this.redis.del(`idem:${hash}`)
    } catch {
      // Best effort: the claim expires with the retention period.
    }
  }
}
