import type { V1Pod } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import {
  AGENT_RESTARTED_MESSAGE,
  derivePhase,
  finalPhase,
  hasStartedContainers,
  markProcessesLost,
  newPodRecord,
  recordFromApiStatus,
  terminateUnstarted,
} from './pod-record.js'

const now = new Date('2030-01-01T00:00:00Z')

function pod(spec: Partial<NonNullable<V1Pod['spec']>> = {}, status?: V1Pod['status']): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: { restartPolicy: 'Never', containers: [{ name: 'a' }, { name: 'b' }], ...spec },
    status,
  }
}

describe('derivePhase', () => {
  it('is Pending before anything runs and Running once a container runs', () => {
    const rec = newPodRecord(pod())
    expect(derivePhase(rec)).toBe('Pending')
    rec.containers[0].state = { kind: 'running', startedAt: now, containerId: 'x' }
    expect(derivePhase(rec)).toBe('Running')
  })

  it('stays Running while one container still runs, then decides by exit codes', () => {
    const rec = newPodRecord(pod())
    rec.containers[0].state = { kind: 'terminated', exitCode: 0, reason: 'Completed', finishedAt: now }
    rec.containers[1].state = { kind: 'running', startedAt: now, containerId: 'x' }
    expect(derivePhase(rec)).toBe('Running')
    rec.containers[1].state = { kind: 'terminated', exitCode: 2, reason: 'Error', finishedAt: now }
    expect(derivePhase(rec)).toBe('Failed')
    rec.containers[1].state = { kind: 'terminated', exitCode: 0, reason: 'Completed', finishedAt: now }
    expect(derivePhase(rec)).toBe('Succeeded')
  })

  it('keeps OnFailure pods with failures Running (they restart) and Always pods Running', () => {
    const onFailure = newPodRecord(pod({ restartPolicy: 'OnFailure', containers: [{ name: 'a' }] }))
    onFailure.containers[0].state = { kind: 'terminated', exitCode: 1, reason: 'Error', finishedAt: now }
    expect(derivePhase(onFailure)).toBe('Running')
    const always = newPodRecord(pod({ restartPolicy: undefined, containers: [{ name: 'a' }] }))
    always.containers[0].state = { kind: 'terminated', exitCode: 0, reason: 'Completed', finishedAt: now }
    expect(derivePhase(always)).toBe('Running')
  })

  it('is Pending while init containers have not all succeeded', () => {
    const rec = newPodRecord(pod({ initContainers: [{ name: 'i' }] }))
    expect(rec.containers[0].state).toEqual({ kind: 'waiting', reason: 'PodInitializing' })
    rec.initContainers[0].state = { kind: 'running', startedAt: now, containerId: 'x' }
    expect(derivePhase(rec)).toBe('Pending')
  })

  it('uses an explicit phase when the agent decided one', () => {
    const rec = newPodRecord(pod())
    rec.phase = 'Failed'
    expect(derivePhase(rec)).toBe('Failed')
  })
})

describe('terminateUnstarted and finalPhase', () => {
  it('turns waiting containers into terminated ContainerStatusUnknown 137 and fails the pod', () => {
    const rec = newPodRecord(pod())
    rec.containers[0].state = { kind: 'terminated', exitCode: 0, reason: 'Completed', finishedAt: now }
    terminateUnstarted(rec, now)
    expect(rec.containers[1].state).toMatchObject({
      kind: 'terminated',
      exitCode: 137,
      reason: 'ContainerStatusUnknown',
    })
    expect(finalPhase(rec)).toBe('Failed')
  })

  it('leaves regular containers waiting when initialisation never finished', () => {
    const rec = newPodRecord(pod({ initContainers: [{ name: 'i' }] }))
    rec.initContainers[0].state = { kind: 'terminated', exitCode: 1, reason: 'Error', finishedAt: now }
    terminateUnstarted(rec, now)
    expect(rec.containers[0].state.kind).toBe('waiting')
    expect(finalPhase(rec)).toBe('Failed')
  })

  it('is Succeeded only when every container exited 0', () => {
    const rec = newPodRecord(pod())
    for (const c of rec.containers) c.state = { kind: 'terminated', exitCode: 0, reason: 'Completed', finishedAt: now }
    expect(finalPhase(rec)).toBe('Succeeded')
  })
})

describe('agent restart handling', () => {
  const seen = pod(
    { containers: [{ name: 'a' }, { name: 'b' }] },
    {
      phase: 'Running',
      startTime: now,
      containerStatuses: [
        { name: 'a', image: '', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: now } } },
        {
          name: 'b',
          image: '',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 0, reason: 'Completed', finishedAt: now } },
        },
      ],
    },
  )

  it('detects pods an earlier agent started', () => {
    expect(hasStartedContainers(seen)).toBe(true)
    expect(hasStartedContainers(pod({}, { phase: 'Pending' }))).toBe(false)
  })

  it('fails them with exit code 137 for the lost processes, keeping finished ones', () => {
    const rec = recordFromApiStatus(seen)
    markProcessesLost(rec, now)
    expect(rec.phase).toBe('Failed')
    expect(rec.containers[0].state).toMatchObject({
      kind: 'terminated',
      exitCode: 137,
      reason: 'Error',
      message: AGENT_RESTARTED_MESSAGE,
      startedAt: now,
    })
    expect(rec.containers[1].state).toMatchObject({ kind: 'terminated', exitCode: 0, reason: 'Completed' })
  })

  it('adopts terminal phases as recorded', () => {
    const rec = recordFromApiStatus(pod({}, { phase: 'Succeeded', reason: 'x' }))
    expect(rec.phase).toBe('Succeeded')
    expect(rec.reason).toBe('x')
  })
})
