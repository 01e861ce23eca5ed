import type { V1Pod } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { buildPodStatus, rfc3339 } from './pod-status.js'
import { newPodRecord, type PodRecord } from './pod-record.js'

const t0 = new Date('2030-01-02T03:04:05.678Z')
const t1 = new Date('2030-01-02T03:04:15.000Z')
const t2 = new Date('2030-01-02T03:05:00.000Z')

function jobPod(overrides: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name: 'job-abc', namespace: 'ns', uid: 'uid-1', generation: 1, resourceVersion: '10' },
    spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'dutil/runner:dev' }], ...overrides },
    status: {
      phase: 'Pending',
      qosClass: 'BestEffort',
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: t0 }],
    },
  }
}

function running(rec: PodRecord): PodRecord {
  rec.startTime = t0
  rec.containers[0].state = { kind: 'running', startedAt: t0, containerId: 'dutil-agent://42' }
  return rec
}

function condition(status: ReturnType<typeof buildPodStatus>, type: string) {
  return status.conditions.find((c) => c.type === type)
}

describe('buildPodStatus', () => {
  it('reports a started pod as Running and Ready, like kubelet', () => {
    const pod = jobPod()
    const status = buildPodStatus(running(newPodRecord(pod)), pod, t1)
    expect(status).toMatchObject({
      observedGeneration: 1,
      phase: 'Running',
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      podIP: '127.0.0.1',
      podIPs: [{ ip: '127.0.0.1' }],
      startTime: '2030-01-02T03:04:05Z',
      containerStatuses: [
        {
          name: 'main',
          image: 'dutil/runner:dev',
          imageID: 'dutil-agent://dutil/runner:dev',
          containerID: 'dutil-agent://42',
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: '2030-01-02T03:04:05Z' } },
          lastState: {},
        },
      ],
    })
    for (const type of ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready', 'PodReadyToStartContainers']) {
      expect(condition(status, type)).toMatchObject({ status: 'True' })
    }
    // Unchanged condition keeps its transition time; changed ones get "now".
    expect(condition(status, 'PodScheduled')?.lastTransitionTime).toBe('2030-01-02T03:04:05Z')
    expect(condition(status, 'Ready')?.lastTransitionTime).toBe(rfc3339(t1))
    expect(status).not.toHaveProperty('qosClass')
  })

  it('reports a successful exit as Succeeded with PodCompleted conditions', () => {
    const pod = jobPod()
    const rec = running(newPodRecord(pod))
    rec.containers[0].state = {
      kind: 'terminated',
      exitCode: 0,
      reason: 'Completed',
      startedAt: t0,
      finishedAt: t2,
      containerId: 'dutil-agent://42',
    }
    const status = buildPodStatus(rec, pod, t2)
    expect(status.phase).toBe('Succeeded')
    expect(status.containerStatuses[0]).toMatchObject({
      ready: false,
      started: false,
      state: {
        terminated: {
          exitCode: 0,
          reason: 'Completed',
          startedAt: '2030-01-02T03:04:05Z',
          finishedAt: '2030-01-02T03:05:00Z',
          containerID: 'dutil-agent://42',
        },
      },
    })
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' })
    expect(condition(status, 'ContainersReady')).toMatchObject({ status: 'False', reason: 'PodCompleted' })
    expect(condition(status, 'Initialized')).toMatchObject({ status: 'True', reason: 'PodCompleted' })
  })

  it('reports a failed exit as Failed with exit code, signal and message (restartPolicy Never)', () => {
    const pod = jobPod()
    const rec = running(newPodRecord(pod))
    rec.containers[0].state = {
      kind: 'terminated',
      exitCode: 137,
      signal: 9,
      reason: 'Error',
      message: 'boom',
      startedAt: t0,
      finishedAt: t2,
    }
    const status = buildPodStatus(rec, pod, t2)
    expect(status.phase).toBe('Failed')
    expect(status.containerStatuses[0].state).toEqual({
      terminated: {
        exitCode: 137,
        signal: 9,
        reason: 'Error',
        message: 'boom',
        startedAt: '2030-01-02T03:04:05Z',
        finishedAt: '2030-01-02T03:05:00Z',
      },
    })
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'PodFailed' })
    expect(condition(status, 'PodReadyToStartContainers')).toMatchObject({ status: 'False' })
  })

  it('keeps a failed container Running under OnFailure, and counts restarts', () => {
    const pod = jobPod({ restartPolicy: 'OnFailure' })
    const rec = running(newPodRecord(pod))
    rec.containers[0].lastTerminated = { kind: 'terminated', exitCode: 1, reason: 'Error', finishedAt: t1 }
    rec.containers[0].restartCount = 1
    rec.containers[0].state = { kind: 'waiting', reason: 'CrashLoopBackOff', message: 'back-off 10s' }
    const status = buildPodStatus(rec, pod, t2)
    expect(status.phase).toBe('Running')
    expect(status.containerStatuses[0]).toMatchObject({
      restartCount: 1,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 1, reason: 'Error' } },
    })
    expect(condition(status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [main]',
    })
  })

  it('reports a config error as Pending with the waiting reason', () => {
    const pod = jobPod()
    const rec = newPodRecord(pod)
    rec.startTime = t0
    rec.containers[0].state = { kind: 'waiting', reason: 'CreateContainerConfigError', message: 'secret "s" not found' }
    const status = buildPodStatus(rec, pod, t1)
    expect(status.phase).toBe('Pending')
    expect(status.containerStatuses[0]).toMatchObject({
      imageID: '',
      ready: false,
      started: false,
      state: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "s" not found' } },
    })
    expect(status.containerStatuses[0]).not.toHaveProperty('containerID')
  })

  it('reports init containers and the Initialized condition', () => {
    const pod = jobPod({ initContainers: [{ name: 'init-a' }, { name: 'init-b' }] })
    const rec = newPodRecord(pod)
    rec.startTime = t0
    rec.initContainers[0].state = { kind: 'terminated', exitCode: 0, reason: 'Completed', finishedAt: t1 }
    rec.initContainers[1].state = { kind: 'running', startedAt: t1, containerId: 'dutil-agent://7' }
    const status = buildPodStatus(rec, pod, t1)
    expect(status.phase).toBe('Pending')
    expect(status.initContainerStatuses?.map((s) => s.ready)).toEqual([true, false])
    expect(status.containerStatuses[0].state).toEqual({ waiting: { reason: 'PodInitializing' } })
    expect(condition(status, 'Initialized')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotInitialized',
      message: 'containers with incomplete status: [init-b]',
    })
  })

  it('keeps conditions it does not own and never regresses a terminal phase', () => {
    const pod = jobPod()
    pod.status = {
      phase: 'Failed',
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', lastTransitionTime: t0 }],
    }
    const status = buildPodStatus(running(newPodRecord(pod)), pod, t1)
    expect(status.phase).toBe('Failed')
    expect(condition(status, 'DisruptionTarget')).toMatchObject({ status: 'True', reason: 'DeletionByPodGC' })
    expect(status.containerStatuses[0].ready).toBe(false)
  })

  it('carries the pod-level reason and message (e.g. DeadlineExceeded)', () => {
    const pod = jobPod()
    const rec = running(newPodRecord(pod))
    rec.phase = 'Failed'
    rec.reason = 'DeadlineExceeded'
    rec.message = 'Pod was active on the node longer than the specified deadline'
    const status = buildPodStatus(rec, pod, t1)
    expect(status).toMatchObject({ phase: 'Failed', reason: 'DeadlineExceeded', message: rec.message })
  })

  it('honours readiness gates', () => {
    const pod = jobPod({ readinessGates: [{ conditionType: 'example.com/gate' }] })
    const status = buildPodStatus(running(newPodRecord(pod)), pod, t1)
    expect(condition(status, 'ContainersReady')).toMatchObject({ status: 'True' })
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'ReadinessGatesNotReady' })
  })
})
