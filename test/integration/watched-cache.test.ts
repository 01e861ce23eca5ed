import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { loadKubeConfig, watchedCache } from '../../platform/kube.js'

const kc = loadKubeConfig(inject('kubeconfigPath'))
const core = kc.makeApiClient(CoreV1Api)
const ns = `watched-cache-${Date.now().toString(36)}`
const log = pino({ level: 'silent' })

beforeAll(async () => {
  await core.createNamespace({ body: { metadata: { name: ns } } })
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'first' }, data: { a: '1' } } })
})
afterAll(() => core.deleteNamespace({ name: ns }))

describe('a watched cache', () => {
  it('is synced only once its first list came back, even when that list failed before', async () => {
    let calls = 0
    const cache = watchedCache<V1ConfigMap>(
      kc,
      `/api/v1/namespaces/${ns}/configmaps`,
      async () => {
        // The API server answers the first list with an error, as a busy one may.
        if (++calls === 1) throw new Error('the first list failed')
        return core.listNamespacedConfigMap({ namespace: ns })
      },
      log,
    )
    try {
      await cache.synced
      expect(calls).toBeGreaterThanOrEqual(2)
      expect(cache.cache.list(ns).map((c) => c.metadata?.name)).toContain('first')
      // And it keeps watching from there.
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'second' } } })
      await expect.poll(() => cache.cache.list(ns).map((c) => c.metadata?.name)).toContain('second')
    } finally {
      await cache.stop()
    }
  })
})
