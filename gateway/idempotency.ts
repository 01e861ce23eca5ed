import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { LABELS } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { invalid } from './api-error.js'
import type { JobStore } from './job-store.js'

export const MAX_IDEMPOTENCY_KEY_LENGTH = 200

export function readIdempotencyKey(header: string): string | undefined {
  if (header === '') return undefined
  if (header.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw invalid('Idempotency-Key must be at most 200 characters.', [{ path: 'Idempotency-Key', message: 'must be at most 200 characters' }])
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

  async claim(hash: string, jobName: string): Promise<Claim> {
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
    for (let i = 0; i < 50; i++) {
      const job = (await this.store.get(winner)) ?? (await this.durable(hash))
      if (job) return { kind: 'existing', job }
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error(`idempotency claim ${winner} has no job`)
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
