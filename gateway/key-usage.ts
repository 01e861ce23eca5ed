import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { API_GROUP, API_KEY, API_VERSION } from '../contract/api-group.js'
import { isoMs } from '../contract/time.js'

export const LAST_USED_INTERVAL_MS = 60_000

/**
 * Records `lastUsedAt` on an ApiKey at most once a minute per key: a Redis `SET NX` with a
 * one-minute expiry elects the one request (across gateway replicas) that writes it. While
 * Redis is away, each replica limits itself with its own clock instead.
 */
export class KeyUsage {
  private readonly local = new Map<string, number>()

  constructor(
    private readonly redis: Redis,
    private readonly custom: CustomObjectsApi,
    private readonly namespace: string,
    private readonly log: Logger,
  ) {}

  private async elected(keyId: string, now: number): Promise<boolean> {
    try {
      return (await this.redis.set(`lastused:${keyId}`, '1', 'PX', LAST_USED_INTERVAL_MS, 'NX')) === 'OK'
    } catch {
      const last = this.local.get(keyId)
      if (last !== undefined && now - last < LAST_USED_INTERVAL_MS) return false
      this.local.set(keyId, now)
      return true
    }
  }

  /** Fire and forget: never delays or fails the request. */
  touch(keyId: string, objectName: string, now = Date.now()): void {
    void (async () => {
      if (!(await this.elected(keyId, now))) return
      await this.custom.patchNamespacedCustomObjectStatus(
        {
          group: API_GROUP,
          version: API_VERSION,
          namespace: this.namespace,
          plural: API_KEY.plural,
          name: objectName,
          body: { status: { lastUsedAt: isoMs(now) } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
    })().catch((err) => this.log.warn({ err: (err as Error).message, keyId }, 'recording lastUsedAt failed'))
  }
}
