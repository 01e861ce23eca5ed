// Pure builders of the pod status the agent writes through pods/status, from its own record
// (pod-record.ts) plus the pod as last read (for conditions it does not own and for
// lastTransitionTime continuity). Mirrors kubelet's generateAPIPodStatus where it matters to
// the Job controller: phase, Ready/ContainersReady/Initialized, container states and exit codes.
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node'
import { NODE_IP, POD_IP } from './node-constants.js'
import {
  type ContainerRecord,
  type ContainerRunState,
  type PodPhase,
  type PodRecord,
  derivePhase,
  initialized,
  isTerminalPhase,
} from './pod-record.js'

/** Conditions kubelet owns; any other condition on the pod (e.g. DisruptionTarget) is kept. */
export const OWNED_CONDITIONS = ['PodScheduled', 'PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready']

export const IMAGE_ID_PREFIX = 'dutil-agent://'

/** RFC 3339 with second precision, as the API server stores metav1.Time. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

export interface ConditionJson {
  type: string
  status: 'True' | 'False' | 'Unknown'
  reason?: string
  message?: string
  lastProbeTime: null
  lastTransitionTime: string
}

type StateJson =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | {
      terminated: {
        exitCode: number
        signal?: number
        reason: string
        message?: string
        startedAt?: string
        finishedAt: string
        containerID?: string
      }
    }

export interface ContainerStatusJson {
  name: string
  image: string
  imageID: string
  containerID?: string
  ready: boolean
  started: boolean
  restartCount: number
  state: StateJson
  lastState: StateJson | Record<string, never>
}

export interface PodStatusJson {
  observedGeneration?: number
  phase: PodPhase
  reason?: string
  message?: string
  conditions: Array<ConditionJson | V1PodCondition>
  hostIP: string
  hostIPs: Array<{ ip: string }>
  podIP: string
  podIPs: Array<{ ip: string }>
  startTime?: string
  initContainerStatuses?: ContainerStatusJson[]
  containerStatuses: ContainerStatusJson[]
}

/** Go's `%s` of a []string, as kubelet formats container lists in condition messages. */
function goList(names: string[]): string {
  return `[${names.join(' ')}]`
}

export function stateJson(s: ContainerRunState): StateJson {
  switch (s.kind) {
    case 'waiting':
      return { waiting: { reason: s.reason, ...(s.message ? { message: s.message } : {}) } }
    case 'running':
      return { running: { startedAt: rfc3339(s.startedAt) } }
    case 'terminated':
      return {
        terminated: {
          exitCode: s.exitCode,
          ...(s.signal ? { signal: s.signal } : {}),
          reason: s.reason,
          ...(s.message ? { message: s.message } : {}),
          ...(s.startedAt ? { startedAt: rfc3339(s.startedAt) } : {}),
          finishedAt: rfc3339(s.finishedAt),
          ...(s.containerId ? { containerID: s.containerId } : {}),
        },
      }
  }
}

function containerId(s: ContainerRunState): string | undefined {
  return s.kind === 'waiting' ? undefined : s.containerId || undefined
}

export function containerStatusJson(c: ContainerRecord, terminal: boolean): ContainerStatusJson {
  const running = c.state.kind === 'running'
  const id = containerId(c.state) ?? (c.lastTerminated ? containerId(c.lastTerminated) : undefined)
  return {
    name: c.name,
    image: c.image,
    imageID: c.state.kind === 'waiting' && !c.lastTerminated ? '' : `${IMAGE_ID_PREFIX}${c.image}`,
    ...(id ? { containerID: id } : {}),
    ready: running && !terminal,
    started: running,
    restartCount: c.restartCount,
    state: stateJson(c.state),
    lastState: c.lastTerminated ? stateJson(c.lastTerminated) : {},
  }
}

type DesiredCondition = Omit<ConditionJson, 'lastProbeTime' | 'lastTransitionTime'>

function initializedCondition(rec: PodRecord, phase: PodPhase): DesiredCondition {
  if (phase === 'Succeeded') return { type: 'Initialized', status: 'True', reason: 'PodCompleted' }
  const regularStarted = rec.containers.some((c) => c.state.kind !== 'waiting' || c.restartCount > 0)
  if (initialized(rec) || regularStarted) return { type: 'Initialized', status: 'True' }
  const incomplete = rec.initContainers
    .filter((c) => !(c.state.kind === 'terminated' && c.state.exitCode === 0))
    .map((c) => c.name)
  return {
    type: 'Initialized',
    status: 'False',
    reason: 'ContainersNotInitialized',
    message: `containers with incomplete status: ${goList(incomplete)}`,
  }
}

function containersReadyCondition(rec: PodRecord, phase: PodPhase): DesiredCondition {
  if (phase === 'Succeeded') return { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' }
  if (phase === 'Failed') return { type: 'ContainersReady', status: 'False', reason: 'PodFailed' }
  const unready = rec.containers.filter((c) => c.state.kind !== 'running').map((c) => c.name)
  if (unready.length === 0) return { type: 'ContainersReady', status: 'True' }
  return {
    type: 'ContainersReady',
    status: 'False',
    reason: 'ContainersNotReady',
    message: `containers with unready status: ${goList(unready)}`,
  }
}

function readyCondition(pod: V1Pod, containersReady: DesiredCondition): DesiredCondition {
  if (containersReady.status !== 'True') return { ...containersReady, type: 'Ready' }
  const unmet: string[] = []
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = pod.status?.conditions?.find((x) => x.type === gate.conditionType)
    if (!c) unmet.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`)
    else if (c.status !== 'True')
      unmet.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`)
  }
  if (unmet.length > 0)
    return { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: unmet.join(', ') }
  return { type: 'Ready', status: 'True' }
}

/** Conditions the agent owns, merged with the pod's other conditions; transition times kept when unchanged. */
export function buildConditions(
  rec: PodRecord,
  pod: V1Pod,
  phase: PodPhase,
  now: Date,
): Array<ConditionJson | V1PodCondition> {
  const terminal = isTerminalPhase(phase)
  const containersReady = containersReadyCondition(rec, phase)
  const desired: DesiredCondition[] = [
    { type: 'PodReadyToStartContainers', status: terminal ? 'False' : 'True' },
    initializedCondition(rec, phase),
    readyCondition(pod, containersReady),
    containersReady,
    { type: 'PodScheduled', status: 'True' },
  ]
  const existing = pod.status?.conditions ?? []
  const owned = desired.map((d): ConditionJson => {
    const prev = existing.find((c) => c.type === d.type)
    const prevTime = prev?.lastTransitionTime
    const keep = prev && prev.status === d.status && prevTime
    return {
      ...d,
      lastProbeTime: null,
      lastTransitionTime: keep ? rfc3339(new Date(prevTime as Date | string)) : rfc3339(now),
    }
  })
  const others = existing.filter((c) => !OWNED_CONDITIONS.includes(c.type))
  return [...owned, ...others]
}

/**
 * The complete status the agent writes for `rec`. `pod` is the object as just read from the API
 * server; a terminal phase already recorded there is never regressed.
 */
export function buildPodStatus(rec: PodRecord, pod: V1Pod, now: Date): PodStatusJson {
  let phase = derivePhase(rec)
  const serverPhase = pod.status?.phase
  if (isTerminalPhase(serverPhase) && !isTerminalPhase(phase)) phase = serverPhase
  const terminal = isTerminalPhase(phase)
  const status: PodStatusJson = {
    ...(pod.metadata?.generation ? { observedGeneration: pod.metadata.generation } : {}),
    phase,
    ...(rec.reason ? { reason: rec.reason } : {}),
    ...(rec.message ? { message: rec.message } : {}),
    conditions: buildConditions(rec, pod, phase, now),
    hostIP: NODE_IP,
    hostIPs: [{ ip: NODE_IP }],
    podIP: POD_IP,
    podIPs: [{ ip: POD_IP }],
    ...(rec.startTime ? { startTime: rfc3339(rec.startTime) } : {}),
    containerStatuses: rec.containers.map((c) => containerStatusJson(c, terminal)),
  }
  if (rec.initContainers.length > 0) {
    status.initContainerStatuses = rec.initContainers.map((c) => {
      const s = containerStatusJson(c, terminal)
      // kubelet reports a completed init container as ready.
      s.ready = c.state.kind === 'terminated' && c.state.exitCode === 0
      return s
    })
  }
  return status
}
