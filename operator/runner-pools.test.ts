import type { CoreV1Api, ObjectCache, V1Pod } from '@kubernetes/client-node'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { runnerSettings } from '../test/support/runner-settings.js'
import type { PoolClient } from './pool-client.js'
import { RunnerPools } from './runner-pools.js'
import { UnfinishedJobs } from './unfinished-jobs.js'

const cacheOf = <T extends { metadata?: { name?: string } }>(items: Map<string, T>) =>
  ({ get: (name: string) => items.get(name), list: () => [...items.values()] }) as unknown as ObjectCache<T>

describe('RunnerPools upkeep', () => {
  it('makes the spare pods once, though the watch shows them only later', async () => {
    const pods = new Map<string, V1Pod>()
    const created: V1Pod[] = []
    const pools = new RunnerPools({
      namespace: 'dutil',
      pods: cacheOf(pods),
      utilityJobs: cacheOf(new Map<string, UtilityJobResource>()),
      jobs: new UnfinishedJobs(),
      core: {
        createNamespacedPod: async ({ body }: { body: V1Pod }) => {
          created.push(body)
          return body
        },
      } as unknown as CoreV1Api,
      runner: runnerSettings({ pools: { 'zip-files': { size: 3, spare: 2, restartEvery: 10, idleSeconds: 60 } } }),
      client: {} as PoolClient,
      wake: () => {},
      log: pino({ level: 'silent' }),
    })
    pools.lead(new AbortController().signal)
    await pools.sync()
    await pools.sync()
    expect(created).toHaveLength(2)
    expect(created.every((p) => p.metadata!.name!.startsWith('dutil-pool-zip-files-'))).toBe(true)
    // Once the watch shows them, still two.
    for (const pod of created) pods.set(pod.metadata!.name!, pod)
    await pools.sync()
    expect(created).toHaveLength(2)
  })
})
