import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { tenantHash } from './pool-pod.js'
import { UnfinishedJobs } from './unfinished-jobs.js'

function job(
  name: string,
  o: { utility?: string; key?: string; state?: string; runnerPod?: string; deleting?: boolean } = {},
): UtilityJobResource {
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name, namespace: 'dutil', ...(o.deleting ? { deletionTimestamp: new Date() } : {}) },
    spec: {
      jobId: `job_${name}`,
      utility: o.utility ?? 'split-pdf',
      mode: 'async',
      apiKeyId: o.key ?? 'key_a',
      apiKeyName: 'k',
      createdAt: '2026-11-27T10:00:00.000Z',
      inputKey: '_jobs/x/input.json',
      metadata: null,
    },
    ...(o.state || o.runnerPod
      ? { status: { state: o.state ?? 'running', ...(o.runnerPod ? { runnerPod: o.runnerPod } : {}) } }
      : {}),
  } as UtilityJobResource
}

const a = tenantHash('key:key_a')
const b = tenantHash('key:key_b')

describe('UnfinishedJobs', () => {
  it("follows the watch: a job's pod from its status, its tenant while unfinished, nothing once it ends", () => {
    const index = new UnfinishedJobs()
    index.apply('add', job('j1'))
    index.apply('add', job('j2', { key: 'key_b' }))
    index.apply('add', job('j3', { utility: 'html-pdf', key: 'key_b' }))
    expect(index.tenantsAtWork('split-pdf')).toEqual(new Set([a, b]))
    expect(index.tenantsAtWork('html-pdf')).toEqual(new Set([b]))
    expect(index.runnerPods()).toEqual(new Map())

    index.apply('update', job('j1', { runnerPod: 'dutil-pool-split-pdf-x' }))
    expect(index.runnerPods()).toEqual(new Map([['j1', 'dutil-pool-split-pdf-x']]))

    // Finished: its pod is free and its tenant no longer at work (key_b still is, by j2); the
    // end is told once, however often the finished job is seen again.
    expect(index.apply('update', job('j1', { state: 'succeeded', runnerPod: 'dutil-pool-split-pdf-x' }))).toBe(true)
    expect(index.apply('update', job('j1', { state: 'succeeded', runnerPod: 'dutil-pool-split-pdf-x' }))).toBe(false)
    expect(index.apply('delete', job('j1', { state: 'succeeded', runnerPod: 'dutil-pool-split-pdf-x' }))).toBe(false)
    expect(index.runnerPods()).toEqual(new Map())
    expect(index.tenantsAtWork('split-pdf')).toEqual(new Set([b]))

    // Being deleted counts as finished; deleted, as gone.
    expect(index.apply('update', job('j2', { key: 'key_b', deleting: true }))).toBe(true)
    expect(index.apply('delete', job('j3', { utility: 'html-pdf', key: 'key_b' }))).toBe(true)
    expect(index.tenantsAtWork('split-pdf')).toEqual(new Set())
    expect(index.tenantsAtWork('html-pdf')).toEqual(new Set())
    expect(index.size).toBe(0)
  })

  it('counts a tenant at work until its last unfinished job of the utility ends, whatever the order of updates', () => {
    const index = UnfinishedJobs.of([job('j1'), job('j2'), job('j3', { key: 'key_b' })])
    index.apply('update', job('j1', { state: 'queued' }))
    index.apply('update', job('j1', { state: 'queued' }))
    index.apply('update', job('j1', { state: 'failed' }))
    expect(index.tenantsAtWork('split-pdf')).toEqual(new Set([a, b]))
    // An end seen twice (a relist, then the update) changes nothing more.
    index.apply('update', job('j1', { state: 'failed' }))
    index.apply('delete', job('j1', { state: 'failed' }))
    expect(index.tenantsAtWork('split-pdf')).toEqual(new Set([a, b]))
    index.apply('update', job('j2', { state: 'cancelled' }))
    expect(index.tenantsAtWork('split-pdf')).toEqual(new Set([b]))
    expect(index.size).toBe(1)
  })
})
