import type { V1Job, V1Pod } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { FAILED_POD_CATCH_UP_MS, observeJob, waitsForNode } from './observe-job.js'

const job = (conditions: Array<{ type: string; reason?: string }> = []): V1Job => ({
  status: { conditions: conditions.map((c) => ({ ...c, status: 'True' })) },
})
const pod = (state: Record<string, unknown>): V1Pod => ({
  status: {
    containerStatuses: [{ name: 'runner', ready: false, restartCount: 0, image: 'x', imageID: 'x', state } as never],
  },
})
const started = '2026-11-22T10:00:05Z'

describe('observeJob', () => {
  it('is pending until a runner starts, then running from the container start', () => {
    expect(observeJob(job(), [], 900)).toEqual({ kind: 'pending' })
    expect(observeJob(job(), [pod({ running: { startedAt: started } })], 900)).toEqual({
      kind: 'running',
      podStartedAt: Date.parse(started),
    })
  })

  it('succeeds on Complete or SuccessCriteriaMet', () => {
    expect(observeJob(job([{ type: 'SuccessCriteriaMet' }]), [], 900).kind).toBe('succeeded')
    expect(observeJob(job([{ type: 'Complete' }]), [], 900).kind).toBe('succeeded')
  })

  it('succeeds as soon as a runner exited 0, before the Job controller writes Complete', () => {
    const done = pod({ terminated: { exitCode: 0, startedAt: started, finishedAt: '2026-11-22T10:00:06Z' } })
    expect(observeJob(job(), [done], 900)).toEqual({
      kind: 'succeeded',
      podStartedAt: Date.parse(started),
      finishedAt: Date.parse('2026-11-22T10:00:06Z'),
    })
    // A crashed try beside it does not matter: one completion is the Job's success.
    expect(observeJob(job(), [pod({ terminated: { exitCode: 1, startedAt: started } }), done], 900).kind).toBe(
      'succeeded',
    )
    // Any other exit is not a success until the Job says so.
    expect(observeJob(job(), [pod({ terminated: { exitCode: 1, startedAt: started } })], 900).kind).toBe('running')
  })

  it('fails as upstream_timeout at the deadline, naming the limit', () => {
    const obs = observeJob(job([{ type: 'FailureTarget', reason: 'DeadlineExceeded' }]), [], 300)
    expect(obs).toMatchObject({
      kind: 'failed',
      error: { code: 'upstream_timeout', message: 'The utility did not finish within its time limit of 300 s.' },
    })
  })

  it('takes a classified failure from the runner termination message', () => {
    const p = pod({
      terminated: {
        exitCode: 10,
        startedAt: started,
        message: JSON.stringify({ code: 'upstream_rejected', message: 'The PDF has 600 pages', upstreamStatus: 404 }),
      },
    })
    expect(observeJob(job([{ type: 'Failed', reason: 'PodFailurePolicy' }]), [p], 900)).toMatchObject({
      kind: 'failed',
      error: { code: 'upstream_rejected', message: 'The PDF has 600 pages', upstreamStatus: 404 },
    })
  })

  it("waits for the pod that failed the Job when this view does not show its exit yet, then fails without the runner's account", () => {
    const failedAt = '2026-11-22T10:00:06Z'
    const failedJob: V1Job = {
      status: {
        conditions: [
          { type: 'Failed', reason: 'PodFailurePolicy', status: 'True', lastTransitionTime: failedAt as never },
        ],
      },
    }
    const stillRunning = pod({ running: { startedAt: started } })
    const at = (ms: number) => ({ imagePullGraceMs: 60_000, now: Date.parse(failedAt) + ms })
    expect(observeJob(failedJob, [stillRunning], 900, at(50))).toEqual({ kind: 'failure-unseen', recheckInMs: 100 })
    expect(observeJob(failedJob, [], 900, at(50)).kind).toBe('failure-unseen')
    // Its exit arrives: the runner's own account.
    const exited = pod({
      terminated: {
        exitCode: 10,
        startedAt: started,
        message: JSON.stringify({ code: 'upstream_rejected', message: 'Not found' }),
      },
    })
    expect(observeJob(failedJob, [exited], 900, at(150))).toMatchObject({
      kind: 'failed',
      error: { code: 'upstream_rejected', message: 'Not found' },
    })
    // Its pod never shows (deleted meanwhile): the generic failure, after the catch-up time.
    expect(observeJob(failedJob, [stillRunning], 900, at(FAILED_POD_CATCH_UP_MS))).toMatchObject({
      kind: 'failed',
      error: { code: 'upstream_error' },
    })
  })

  it('never passes on a message the runner did not write as its JSON (e.g. a log tail)', () => {
    const p = pod({ terminated: { exitCode: 10, message: 'Error: ENOENT /secret/path\n    at stack' } })
    expect(observeJob(job([{ type: 'Failed', reason: 'PodFailurePolicy' }]), [p], 900)).toMatchObject({
      kind: 'failed',
      error: { code: 'upstream_error', message: 'The utility failed unexpectedly.' },
    })
    const crash = pod({
      terminated: { exitCode: 1, message: JSON.stringify({ code: 'upstream_rejected', message: 'spoof' }) },
    })
    expect(observeJob(job([{ type: 'Failed', reason: 'BackoffLimitExceeded' }]), [crash], 900)).toMatchObject({
      error: { code: 'upstream_error' },
    })
  })

  it('fails at once as upstream_error when a runner was OOM-killed, naming the limit, and stops the Job retrying', () => {
    const p: V1Pod = {
      ...pod({ terminated: { exitCode: 137, reason: 'OOMKilled', startedAt: started } }),
      spec: { containers: [{ name: 'runner', resources: { limits: { memory: '512Mi' } } }] },
    }
    expect(observeJob(job(), [p], 900)).toEqual({
      kind: 'failed',
      error: {
        code: 'upstream_error',
        message: 'The utility ran out of memory (its limit is 512Mi); a smaller input may succeed.',
      },
      podStartedAt: Date.parse(started),
      stopJob: true,
    })
    // The Job failed already (its pod failure policy or back-off): nothing left to stop.
    expect(observeJob(job([{ type: 'Failed', reason: 'BackoffLimitExceeded' }]), [p], 900)).toMatchObject({
      kind: 'failed',
      stopJob: false,
    })
  })

  it('waits out the image-pull grace, then fails as internal and stops the Job', () => {
    const at = Date.parse('2026-11-22T10:00:00Z')
    const p: V1Pod = {
      ...pod({ waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } }),
      metadata: { creationTimestamp: new Date(at) },
    }
    expect(observeJob(job(), [p], 900, { imagePullGraceMs: 60_000, now: at + 10_000 })).toEqual({
      kind: 'start-failure-waiting',
      recheckInMs: 50_100,
    })
    expect(observeJob(job(), [p], 900, { imagePullGraceMs: 60_000, now: at + 61_000 })).toEqual({
      kind: 'failed',
      error: {
        code: 'internal',
        message: 'The utility could not be started: its runner image is not available in the cluster.',
      },
      podStartedAt: null,
      stopJob: true,
    })
    // A container the node cannot create (a seccomp profile missing on it): the same grace, its own words.
    const uncreatable: V1Pod = {
      ...pod({ waiting: { reason: 'CreateContainerError', message: 'cannot load seccomp profile' } }),
      metadata: { creationTimestamp: new Date(at) },
    }
    expect(observeJob(job(), [uncreatable], 900, { imagePullGraceMs: 60_000, now: at + 10_000 })).toMatchObject({
      kind: 'start-failure-waiting',
    })
    expect(observeJob(job(), [uncreatable], 900, { imagePullGraceMs: 60_000, now: at + 61_000 })).toMatchObject({
      kind: 'failed',
      error: {
        code: 'internal',
        message: 'The utility could not be started: the cluster cannot create its runner container.',
      },
      stopJob: true,
    })
    // Other waiting reasons (scheduling, volumes) are plain pending.
    expect(
      observeJob(job(), [pod({ waiting: { reason: 'ContainerCreating' } })], 900, { imagePullGraceMs: 0, now: at }),
    ).toEqual({ kind: 'pending' })
  })

  it('names storage_error when the retries of a runner that could not reach storage ran out; anything else stays a crash', () => {
    const away = pod({
      terminated: {
        exitCode: 13,
        startedAt: started,
        message: JSON.stringify({ code: 'storage_error', message: "The job's input could not be read from storage." }),
      },
    })
    expect(observeJob(job([{ type: 'Failed', reason: 'BackoffLimitExceeded' }]), [away], 900)).toMatchObject({
      kind: 'failed',
      error: { code: 'storage_error', message: "The job's input could not be read from storage." },
    })
    // A transient exit may only claim storage_error.
    const spoof = pod({
      terminated: { exitCode: 13, message: JSON.stringify({ code: 'upstream_rejected', message: 'spoof' }) },
    })
    expect(observeJob(job([{ type: 'Failed', reason: 'BackoffLimitExceeded' }]), [spoof], 900)).toMatchObject({
      error: { code: 'upstream_error', message: 'The utility failed unexpectedly.' },
    })
  })
})

describe('waitsForNode', () => {
  const pending = (conditions: Array<{ type: string; status: string; reason?: string }>) =>
    ({ status: { phase: 'Pending', conditions } }) as V1Pod
  it('is true only for a pending pod the scheduler could not place', () => {
    expect(waitsForNode(pending([{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }]))).toBe(true)
    expect(waitsForNode(pending([{ type: 'PodScheduled', status: 'True' }]))).toBe(false)
    expect(waitsForNode(pending([]))).toBe(false)
    expect(
      waitsForNode({
        status: { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
      } as V1Pod),
    ).toBe(false)
  })
})
