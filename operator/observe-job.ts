import type { V1Job, V1Pod } from '@kubernetes/client-node'
import { isJobErrorCode } from '../contract/error-codes.js'
import type { JobError } from '../contract/crd-schemas.js'
import { CLASSIFIED_EXIT_CODES } from '../contract/runner-protocol.js'
import { parseTime } from '../contract/time.js'
import { RUNNER_CONTAINER } from './desired-job.js'

/** What the world says about one run, read from its Job and Pods. */
export type Observation =
  | { kind: 'pending' }
  | { kind: 'running'; podStartedAt: number }
  | { kind: 'succeeded'; podStartedAt: number | null }
  | { kind: 'failed'; error: JobError; podStartedAt: number | null }

const CRASH: JobError = { code: 'upstream_error', message: 'The utility failed unexpectedly.' }

function condition(job: V1Job, ...types: string[]) {
  return job.status?.conditions?.find((c) => types.includes(c.type) && c.status === 'True')
}

function runnerState(pod: V1Pod) {
  return pod.status?.containerStatuses?.find((c) => c.name === RUNNER_CONTAINER)?.state
}

/** When the first runner process really started, from the pods' container states. */
export function firstPodStart(pods: V1Pod[]): number | null {
  let first: number | null = null
  for (const pod of pods) {
    const state = runnerState(pod)
    const started = parseTime(state?.running?.startedAt ?? state?.terminated?.startedAt)
    if (started !== null && (first === null || started < first)) first = started
  }
  return first
}

/** The runner's own account of a classified failure (its termination message), if it left one. */
export function classifiedFailure(pods: V1Pod[]): JobError | null {
  const candidates = pods
    .map((p) => runnerState(p)?.terminated)
    .filter((t) => t && CLASSIFIED_EXIT_CODES.includes(t.exitCode as never))
  for (const t of candidates) {
    try {
      const parsed = JSON.parse(t!.message ?? '') as Record<string, unknown>
      if (isJobErrorCode(parsed.code) && typeof parsed.message === 'string') {
        const err: JobError = { code: parsed.code, message: parsed.message.slice(0, 2000) }
        if (Number.isInteger(parsed.upstreamStatus)) err.upstreamStatus = parsed.upstreamStatus as number
        return err
      }
    } catch {
      // Not the runner's JSON (e.g. log tail): fall through to the generic message.
    }
  }
  return null
}

export function observeJob(job: V1Job, pods: V1Pod[], deadlineSeconds: number): Observation {
  const podStartedAt = firstPodStart(pods)
  if (condition(job, 'Complete', 'SuccessCriteriaMet')) return { kind: 'succeeded', podStartedAt }
  const failed = condition(job, 'Failed', 'FailureTarget')
  if (failed) {
    let error: JobError
    if (failed.reason === 'DeadlineExceeded') {
      error = { code: 'upstream_timeout', message: `The utility did not finish within its time limit of ${deadlineSeconds} s.` }
    } else if (failed.reason === 'PodFailurePolicy') {
      error = classifiedFailure(pods) ?? CRASH
    } else {
      error = CRASH
    }
    return { kind: 'failed', error, podStartedAt }
  }
  if (podStartedAt !== null) return { kind: 'running', podStartedAt }
  return { kind: 'pending' }
}
