import type { V1Pod } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { LABELS } from '../contract/api-group.js'
import { POOL } from '../contract/runner-protocol.js'
import { catalog } from '../runners/catalog.js'
import { runnerSettings } from '../test/support/runner-settings.js'
import { desiredJob } from './desired-job.js'
import { choosePoolPod, desiredPoolPod, POOL_SPEC_ANNOTATION, poolToken, tenantHash } from './pool-pod.js'

const htmlPdf = catalog.get('html-pdf')!
const pool = { size: 2, restartEvery: 50, browsers: 2 }
const token = 'a'.repeat(64)

describe('desiredPoolPod', () => {
  const pod = desiredPoolPod(htmlPdf, runnerSettings(), pool, 1, 'dutil', token)
  const [c] = pod.spec!.containers

  it('is a runner pod as job mode makes it, long-lived, running the pool program on its port', () => {
    const uj = {
      metadata: { name: 'job-x', namespace: 'dutil', uid: 'u' },
      spec: { jobId: 'job_X', utility: 'html-pdf', createdAt: '2026-01-01T00:00:00.000Z' },
    } as never
    const job = desiredJob(uj, htmlPdf, runnerSettings(), {
      accessKey: 'a',
      secretKey: 's',
      sessionToken: 't',
      expiresAt: '',
    })
    const jobPod = job.spec!.template.spec!
    expect(pod.metadata!.name).toBe('dutil-pool-html-pdf-1')
    expect(pod.spec!.securityContext).toEqual(jobPod.securityContext)
    expect(pod.spec!.automountServiceAccountToken).toBe(false)
    expect(c.securityContext).toEqual(jobPod.containers[0].securityContext)
    expect(c.resources).toEqual(jobPod.containers[0].resources)
    expect(c.image).toBe(jobPod.containers[0].image)
    expect(c.command!.at(-1)).toBe(`/app/${htmlPdf.runner.poolEntry}`)
    expect(c.ports).toEqual([{ name: 'pool', containerPort: POOL.port, protocol: 'TCP' }])
    expect(c.readinessProbe!.httpGet).toEqual({ path: '/healthz', port: POOL.port })
    expect(pod.spec!.restartPolicy).toBe('Never')
    expect(pod.spec!.activeDeadlineSeconds).toBeUndefined()
    // No job of its own: no job label, no storage credentials in its environment.
    expect(pod.metadata!.labels![LABELS.jobId]).toBeUndefined()
    expect(pod.metadata!.labels![LABELS.pool]).toBe('html-pdf')
    expect(c.env!.map((e) => e.name)).not.toContain('DUTIL_S3_ACCESS_KEY')
    expect(c.env).toContainEqual({ name: POOL.restartEveryEnv, value: '50' })
    expect(c.env).toContainEqual({ name: POOL.warmSlotsEnv, value: '2' })
    expect(poolToken(pod)).toBe(token)
  })

  it('hashes its spec without the token: a new token is the same pod, other settings are not', () => {
    const again = desiredPoolPod(htmlPdf, runnerSettings(), pool, 1, 'dutil', 'b'.repeat(64))
    const hash = (p: V1Pod) => p.metadata!.annotations![POOL_SPEC_ANNOTATION]
    expect(hash(again)).toBe(hash(pod))
    expect(hash(desiredPoolPod(htmlPdf, runnerSettings({ imageTag: 'v2' }), pool, 1, 'dutil', token))).not.toBe(
      hash(pod),
    )
    expect(hash(desiredPoolPod(htmlPdf, runnerSettings(), { ...pool, restartEvery: 5 }, 1, 'dutil', token))).not.toBe(
      hash(pod),
    )
  })
})

describe('choosePoolPod', () => {
  const pod = (name: string, ready = true, extra: Partial<V1Pod> = {}): V1Pod => ({
    metadata: { name, labels: { [LABELS.pool]: 'html-pdf' } },
    status: { podIP: '10.0.0.1', phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
    ...extra,
  })
  const a = tenantHash('key:a')
  const b = tenantHash('key:b')

  it("prefers a pod warm for the job's tenant, then one with an unused browser, then the least recently used", () => {
    const pods = [pod('p0'), pod('p1'), pod('p2')]
    const warm = new Map([
      ['p0', { tenants: [b], lastUsed: 3 }],
      ['p1', { tenants: [tenantHash('key:c'), tenantHash('key:d')], lastUsed: 1 }],
      ['p2', { tenants: [b, a], lastUsed: 2 }],
    ])
    expect(choosePoolPod(pods, a, new Set(), warm, 2)?.metadata?.name).toBe('p2')
    expect(choosePoolPod(pods, tenantHash('key:e'), new Set(), warm, 2)?.metadata?.name).toBe('p0')
    expect(choosePoolPod(pods, tenantHash('key:e'), new Set(), warm, 1)?.metadata?.name).toBe('p1')
    expect(choosePoolPod(pods, tenantHash('key:e'), new Set(['p1']), warm, 1)?.metadata?.name).toBe('p2')
  })

  it('lets a job wait for the busy pod warm for its key, with preferWarm, rather than start a browser afresh', () => {
    const pods = [pod('p0'), pod('p1')]
    const warm = new Map([
      ['p0', { tenants: [a, b], lastUsed: 2 }],
      ['p1', { tenants: [tenantHash('key:c'), tenantHash('key:d')], lastUsed: 1 }],
    ])
    expect(choosePoolPod(pods, a, new Set(['p0']), warm, 2, true)).toBeUndefined()
    expect(choosePoolPod(pods, a, new Set(['p0']), warm, 2, false)?.metadata?.name).toBe('p1')
    // A key warm nowhere takes the idle pod at once.
    expect(choosePoolPod(pods, tenantHash('key:e'), new Set(['p0']), warm, 2, true)?.metadata?.name).toBe('p1')
  })

  it('never picks a pod holding a job, not ready, or going', () => {
    const pods = [
      pod('busy'),
      pod('starting', false),
      pod('going', true, {
        metadata: { name: 'going', deletionTimestamp: new Date(), labels: { [LABELS.pool]: 'html-pdf' } },
      }),
      pod('failed', true, { status: { phase: 'Failed', podIP: '10.0.0.2' } }),
    ]
    expect(choosePoolPod(pods, a, new Set(['busy']), new Map(), 2)).toBeUndefined()
    expect(choosePoolPod(pods, a, new Set(), new Map(), 2)?.metadata?.name).toBe('busy')
  })
})
