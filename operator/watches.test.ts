import type { V1Pod } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { LABELS } from '../contract/api-group.js'
import { PodsByOwner } from './watches.js'

const pod = (name: string, owner?: string): V1Pod => ({
  metadata: { name, labels: owner ? { [LABELS.jobId]: owner } : {} },
})

describe('PodsByOwner', () => {
  it("finds a job's pods as the cache has them now, and forgets deleted ones", () => {
    const cache = new Map<string, V1Pod>()
    const index = new PodsByOwner()
    const event = (ev: 'add' | 'update' | 'delete', p: V1Pod) => {
      if (ev === 'delete') cache.delete(p.metadata!.name!)
      else cache.set(p.metadata!.name!, p)
      index.apply(ev, p)
    }
    const lookup = { get: (name: string) => cache.get(name) }
    event('add', pod('a-1', 'job-a'))
    event('add', pod('a-2', 'job-a'))
    event('add', pod('b-1', 'job-b'))
    event('add', pod('pool-0'))
    const newer = { ...pod('a-1', 'job-a'), status: { phase: 'Succeeded' } }
    event('update', newer)
    expect(index.of('job-a', lookup, 'ns')).toEqual([newer, pod('a-2', 'job-a')])
    event('delete', pod('a-2', 'job-a'))
    expect(index.of('job-a', lookup, 'ns')).toEqual([newer])
    expect(index.of('job-b', lookup, 'ns').map((p) => p.metadata!.name)).toEqual(['b-1'])
    expect(index.of('job-c', lookup, 'ns')).toEqual([])
  })
})
