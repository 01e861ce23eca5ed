// The agent's own record of a pod, one per pod uid: what it started, when, and how each
// container ended. Status written to the API server is always rebuilt from this record
// (pod-status.ts), never from what was last read.
import type { V1ContainerState, V1ContainerStatus, V1Pod } from '@kubernetes/client-node'

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed'

export interface TerminatedState {
  kind: 'terminated'
  exitCode: number
  signal?: number
  reason: string
  message?: string
  startedAt?: Date
  finishedAt: Date
  containerId?: string
}

export type ContainerRunState =
  | { kind: 'waiting'; reason: string; message?: string }
  | { kind: 'running'; startedAt: Date; containerId: string }
  | TerminatedState

export interface ContainerRecord {
  name: string
  image: string
  state: ContainerRunState
  lastTerminated?: TerminatedState
  restartCount: number
}

export interface PodRecord {
  uid: string
  namespace: string
  name: string
  restartPolicy: 'Always' | 'OnFailure' | 'Never'
  /** Set once the agent has decided the pod's fate; otherwise derived from the containers. */
  phase?: 'Succeeded' | 'Failed'
  reason?: string
  message?: string
  startTime?: Date
  initContainers: ContainerRecord[]
  containers: ContainerRecord[]
}

export const AGENT_RESTARTED_MESSAGE = 'node agent restarted'
export const DEADLINE_MESSAGE = 'Pod was active on the node longer than the specified deadline'

function restartPolicyOf(pod: V1Pod): PodRecord['restartPolicy'] {
  const p = pod.spec?.restartPolicy
  return p === 'Never' || p === 'OnFailure' ? p : 'Always'
}

export function newPodRecord(pod: V1Pod): PodRecord {
  const hasInit = (pod.spec?.initContainers ?? []).length > 0
  return {
    uid: pod.metadata?.uid ?? '',
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    restartPolicy: restartPolicyOf(pod),
    initContainers: (pod.spec?.initContainers ?? []).map((c) => ({
      name: c.name,
      image: c.image ?? '',
      state: { kind: 'waiting', reason: 'PodInitializing' },
      restartCount: 0,
    })),
    containers: (pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      image: c.image ?? '',
      state: { kind: 'waiting', reason: hasInit ? 'PodInitializing' : 'ContainerCreating' },
      restartCount: 0,
    })),
  }
}

export function isTerminalPhase(phase: string | undefined): phase is 'Succeeded' | 'Failed' {
  return phase === 'Succeeded' || phase === 'Failed'
}

function toDate(v: Date | string | undefined): Date | undefined {
  if (v === undefined || v === null) return undefined
  const d = v instanceof Date ? v : new Date(v)
  return Number.isNaN(d.getTime()) ? undefined : d
}

function stateFromApi(s: V1ContainerState | undefined): ContainerRunState | undefined {
  if (s?.terminated) {
    const t = s.terminated
    return {
      kind: 'terminated',
      exitCode: t.exitCode,
      signal: t.signal,
      reason: t.reason ?? '',
      message: t.message,
      startedAt: toDate(t.startedAt),
      finishedAt: toDate(t.finishedAt) ?? new Date(0),
      containerId: t.containerID,
    }
  }
  if (s?.running) return { kind: 'running', startedAt: toDate(s.running.startedAt) ?? new Date(0), containerId: '' }
  if (s?.waiting) return { kind: 'waiting', reason: s.waiting.reason ?? '', message: s.waiting.message }
  return undefined
}

function adoptStatuses(records: ContainerRecord[], statuses: V1ContainerStatus[] | undefined): void {
  for (const rec of records) {
    const st = statuses?.find((s) => s.name === rec.name)
    if (!st) continue
    rec.state = stateFromApi(st.state) ?? rec.state
    const last = stateFromApi(st.lastState)
    if (last?.kind === 'terminated') rec.lastTerminated = last
    rec.restartCount = st.restartCount ?? 0
  }
}

/** A record rebuilt from the status on the API server (for pods the agent finds on start). */
export function recordFromApiStatus(pod: V1Pod): PodRecord {
  const rec = newPodRecord(pod)
  adoptStatuses(rec.initContainers, pod.status?.initContainerStatuses)
  adoptStatuses(rec.containers, pod.status?.containerStatuses)
  rec.startTime = toDate(pod.status?.startTime)
  if (isTerminalPhase(pod.status?.phase)) {
    rec.phase = pod.status.phase
    rec.reason = pod.status.reason
    rec.message = pod.status.message
  }
  return rec
}

/** True when the API server shows any container as having been started by an earlier agent. */
export function hasStartedContainers(pod: V1Pod): boolean {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
  return statuses.some((s) => s.state?.running || s.state?.terminated || s.lastState?.terminated)
}

/**
 * The agent restarted and the pod's processes are gone: running containers become terminated
 * (137, like a container whose runtime lost it), the pod fails.
 */
export function markProcessesLost(rec: PodRecord, now: Date): void {
  for (const c of [...rec.initContainers, ...rec.containers]) {
    if (c.state.kind !== 'running') continue
    c.state = {
      kind: 'terminated',
      exitCode: 137,
      reason: 'Error',
      message: AGENT_RESTARTED_MESSAGE,
      startedAt: c.state.startedAt,
      finishedAt: now,
      containerId: c.state.containerId || undefined,
    }
  }
  terminateUnstarted(rec, now)
  rec.phase = 'Failed'
  rec.reason = undefined
  rec.message = AGENT_RESTARTED_MESSAGE
}

export function initialized(rec: PodRecord): boolean {
  return rec.initContainers.every((c) => c.state.kind === 'terminated' && c.state.exitCode === 0)
}

/**
 * kubelet's TerminatePod: regular containers without a terminated state are reported as
 * terminated 137 ContainerStatusUnknown, unless initialisation never finished (then the init
 * container's failure describes the pod and waiting containers stay waiting).
 */
export function terminateUnstarted(rec: PodRecord, now: Date): void {
  if (!initialized(rec) && !rec.containers.some((c) => c.state.kind !== 'waiting' || c.restartCount > 0)) return
  for (const c of rec.containers) {
    if (c.state.kind === 'terminated') continue
    c.state = {
      kind: 'terminated',
      exitCode: 137,
      reason: 'ContainerStatusUnknown',
      message: 'The container could not be located when the pod was terminated',
      finishedAt: now,
    }
  }
}

/** Phase once every process is gone: Succeeded only if initialised and all containers exited 0. */
export function finalPhase(rec: PodRecord): 'Succeeded' | 'Failed' {
  const ok = initialized(rec) && rec.containers.every((c) => c.state.kind === 'terminated' && c.state.exitCode === 0)
  return ok ? 'Succeeded' : 'Failed'
}

/** kubelet's getPhase, reduced to what the agent supports (no restartable init containers). */
export function derivePhase(rec: PodRecord): PodPhase {
  if (rec.phase) return rec.phase
  if (!initialized(rec)) return 'Pending'
  const states = rec.containers.map((c) => c.state)
  if (states.some((s) => s.kind === 'running')) return 'Running'
  if (states.every((s) => s.kind === 'waiting')) {
    return rec.containers.some((c) => c.restartCount > 0 || c.lastTerminated) ? 'Running' : 'Pending'
  }
  // Some terminated, none running.
  const stopped = states.filter((s): s is TerminatedState => s.kind === 'terminated')
  if (stopped.length < states.length) return 'Running' // others waiting to (re)start
  if (rec.restartPolicy === 'Always') return 'Running'
  const allOk = stopped.every((s) => s.exitCode === 0)
  if (allOk) return 'Succeeded'
  return rec.restartPolicy === 'Never' ? 'Failed' : 'Running'
}
