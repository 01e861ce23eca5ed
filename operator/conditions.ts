import { type Condition, CONDITION_TYPES, type ConditionType, type UtilityJobStatus } from '../contract/crd-schemas.js'

/**
 * status.conditions, computed from the status being written (metav1.Condition semantics):
 * every type is always present, `lastTransitionTime` moves only when a condition's status
 * flips, and reason/message say why. `kubectl wait --for=condition=Succeeded` (or Failed) is
 * how a cluster admin waits on a job.
 */
export interface ConditionInputs {
  status: UtilityJobStatus
  /** The conditions the object has now. */
  previous: Condition[] | undefined
  /** Whether its batch Job has been created (admission let it start). */
  admitted: boolean
  jobName: string
  /** The pool pod the job was handed to (pool mode), instead of a batch Job. */
  runnerPod?: string
  utility: string
  generation: number | undefined
  now: number
}

/** An error code as a condition reason: upstream_rejected → UpstreamRejected. */
export function reasonOf(code: string): string {
  const camel = code
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')
  return /^[A-Za-z]/.test(camel) ? camel : `Error${camel}`
}

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

function files(n: number): string {
  return n === 1 ? '1 file' : `${n} files`
}

/** What each condition says about a status: [True?, reason, message]. */
function describe(type: ConditionType, i: ConditionInputs): [boolean, string, string] {
  const { status } = i
  const state = status.state
  const stateReason = {
    queued: 'Queued',
    running: 'Running',
    succeeded: 'Succeeded',
    failed: 'Failed',
    cancelled: 'Cancelled',
  }[state]
  switch (type) {
    case 'Admitted':
      if (i.admitted && i.runnerPod)
        return [true, 'PoolPodAssigned', `The job was handed to pool runner pod ${i.runnerPod}.`]
      if (i.admitted) return [true, 'JobCreated', `Batch Job ${i.jobName} was created.`]
      if (state === 'queued') return [false, 'Queued', `Waiting for a run slot of ${i.utility}.`]
      return [false, stateReason, `The job ended (${state}) before it was admitted.`]
    case 'Running':
      if (state === 'running') return [true, 'RunnerStarted', 'The runner is working on the job.']
      return [false, stateReason, state === 'queued' ? 'The runner has not started.' : `The job is ${state}.`]
    case 'Succeeded':
      if (state === 'succeeded')
        return [true, 'Succeeded', `The job succeeded: ${files(status.result?.files.length ?? 0)} stored.`]
      return [false, stateReason, `The job is ${state}.`]
    case 'Failed':
      if (state === 'failed')
        return [true, status.error ? reasonOf(status.error.code) : 'Failed', status.error?.message ?? 'The job failed.']
      return [false, stateReason, `The job is ${state}.`]
  }
}

export function nextConditions(i: ConditionInputs): Condition[] {
  return CONDITION_TYPES.map((type) => {
    const [isTrue, reason, message] = describe(type, i)
    const value = isTrue ? 'True' : 'False'
    const before = i.previous?.find((c) => c.type === type)
    return {
      type,
      status: value,
      ...(i.generation !== undefined ? { observedGeneration: i.generation } : {}),
      lastTransitionTime: before && before.status === value ? before.lastTransitionTime : rfc3339(i.now),
      reason,
      message,
    }
  })
}

/** Whether the Admitted condition of these conditions is True. */
export function wasAdmitted(conditions: Condition[] | undefined): boolean {
  return conditions?.some((c) => c.type === 'Admitted' && c.status === 'True') ?? false
}
