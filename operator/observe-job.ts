import type { V1Job, V1Pod } from '@kubernetes/client-node'
import type { JobError } from '../contract/crd-schemas.js'
import { CLASSIFIED_EXIT_CODES, runnerFailureOf, TRANSIENT_EXIT_CODES } from '../contract/runner-protocol.js'
import { parseTime } from '../contract/time.js'
import { RUNNER_CONTAINER } from './desired-job.js'

/** What the world says about one run, read from its Job and Pods. */
export type Observation =
  | { kind: 'pending' }
  | { kind: 'running'; podStartedAt: number }
  | {
      kind: 'succeeded'
      podStartedAt: number | null
      /** When the run ended (the Job's completion, else the runner's exit). */ finishedAt: number | null
    }
  | {
      kind: 'failed'
      error: JobError
      podStartedAt: number | null
      /** The Job is still trying (or waiting): delete it. */ stopJob?: boolean
    }
  /**
   * Pending with a runner that cannot start (an image not pullable, a container the node cannot
   * create), still within the grace (look again then).
   */
  | { kind: 'start-failure-waiting'; recheckInMs: number }
  /**
   * The Job failed on a runner's classified exit that this view's pods do not show yet (the Job
   * and its pods are watched apart): look again, for the runner's own account of the failure.
   */
  | { kind: 'failure-unseen'; recheckInMs: number }

const CRASH: JobError = { code: 'upstream_error', message: 'The utility failed unexpectedly.' }

/**
 * How long a Job failed by its pod failure policy waits for its pod's status to reach this view
 * before it fails without the runner's account (a pod deleted meanwhile), and the pause between looks.
 */
export const FAILED_POD_CATCH_UP_MS = 10_000
const FAILED_POD_RECHECK_MS = 100

function condition(job: V1Job, ...types: string[]) {
  return job.status?.conditions?.find((c) => types.includes(c.type) && c.status === 'True')
}

function runnerState(pod: V1Pod) {
  return pod.status?.containerStatuses?.find((c) => c.name === RUNNER_CONTAINER)?.state
}

/** Whether a pod's status still shows its runner at work: not finished, its runner not exited. */
export function runnerAtWork(pod: V1Pod): boolean {
  return !['Succeeded', 'Failed'].includes(pod.status?.phase ?? '') && !runnerState(pod)?.terminated
}

/** The scheduler found no node with room for the pod yet (Pending, PodScheduled False: Unschedulable). */
export function waitsForNode(pod: V1Pod): boolean {
  return (
    pod.status?.phase === 'Pending' &&
    (pod.status.conditions ?? []).some(
      (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
    )
  )
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
export function classifiedFailure(
  pods: V1Pod[],
  exitCodes: readonly number[] = CLASSIFIED_EXIT_CODES,
): JobError | null {
  const candidates = pods
    .map((p) => runnerState(p)?.terminated)
    .filter((t) => t && exitCodes.includes(t.exitCode as never))
  for (const t of candidates) {
    try {
      const failure = runnerFailureOf(JSON.parse(t!.message ?? ''))
      if (failure) return failure
    } catch {
      // Not the runner's JSON (e.g. log tail): fall through to the generic message.
    }
  }
  return null
}

function exitedClassified(pod: V1Pod): boolean {
  const exitCode = runnerState(pod)?.terminated?.exitCode
  return exitCode !== undefined && (CLASSIFIED_EXIT_CODES as readonly number[]).includes(exitCode)
}

/** Waiting reasons of a container whose image cannot be had (kubelet's names). */
export const IMAGE_PULL_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull'])
/**
 * Waiting reasons of a container the node cannot create from its spec (kubelet's names): a
 * Localhost seccomp profile missing on the node, a runtime that refuses a setting.
 */
export const CREATE_FAILURE_REASONS = new Set(['CreateContainerError', 'CreateContainerConfigError'])

/** A runner killed by the kernel at its memory limit: the limit, for the message. */
export function oomKilled(pods: V1Pod[]): { limit: string | null } | null {
  for (const pod of pods) {
    if (runnerState(pod)?.terminated?.reason === 'OOMKilled') {
      const limit = pod.spec?.containers?.find((c) => c.name === RUNNER_CONTAINER)?.resources?.limits?.memory
      return { limit: limit ? String(limit) : null }
    }
  }
  return null
}

/**
 * The oldest pod whose runner cannot start: it waits for an image that cannot be pulled, or for a
 * container the node cannot create. Since when, and why.
 */
export function runnerStartFailure(pods: V1Pod[]): { since: number; reason: string; image: string | null } | null {
  let found: { since: number; reason: string; image: string | null } | null = null
  for (const pod of pods) {
    const waiting = runnerState(pod)?.waiting
    if (!waiting?.reason || !(IMAGE_PULL_REASONS.has(waiting.reason) || CREATE_FAILURE_REASONS.has(waiting.reason)))
      continue
    const since = parseTime(pod.status?.startTime ?? pod.metadata?.creationTimestamp) ?? 0
    if (!found || since < found.since)
      found = {
        since,
        reason: waiting.reason,
        image: pod.spec?.containers?.find((c) => c.name === RUNNER_CONTAINER)?.image ?? null,
      }
  }
  return found
}

export interface ObserveOptions {
  /**
   * How long a runner may wait for an image that cannot be pulled, or a container the node cannot
   * create, before the job fails.
   */
  imagePullGraceMs: number
  now: number
}

export function observeJob(
  job: V1Job,
  pods: V1Pod[],
  deadlineSeconds: number,
  o: ObserveOptions = { imagePullGraceMs: 60_000, now: Date.now() },
): Observation {
  const podStartedAt = firstPodStart(pods)
  // A runner that exited 0 has stored its outputs and manifest: the Job is one completion, so
  // that pod is its success. Seen here, a job finishes as soon as the kubelet reports the exit,
  // not when the Job controller gets round to writing Complete (it batches, up to ~1 s).
  const exited = pods.map((p) => runnerState(p)?.terminated).find((t) => t?.exitCode === 0)
  if (exited || condition(job, 'Complete', 'SuccessCriteriaMet')) {
    return {
      kind: 'succeeded',
      podStartedAt,
      finishedAt: parseTime(job.status?.completionTime) ?? parseTime(exited?.finishedAt),
    }
  }
  // Over its memory limit: another try with the same input would be killed again (no retry loop).
  const oom = oomKilled(pods)
  if (oom) {
    const limit = oom.limit ? ` (its limit is ${oom.limit})` : ''
    return {
      kind: 'failed',
      error: { code: 'upstream_error', message: `The utility ran out of memory${limit}; a smaller input may succeed.` },
      podStartedAt,
      stopJob: !condition(job, 'Failed'),
    }
  }
  const failed = condition(job, 'Failed', 'FailureTarget')
  if (failed) {
    let error: JobError
    if (failed.reason === 'DeadlineExceeded') {
      error = {
        code: 'upstream_timeout',
        message: `The utility did not finish within its time limit of ${deadlineSeconds} s.`,
      }
    } else if (failed.reason === 'PodFailurePolicy') {
      const told = classifiedFailure(pods)
      if (!told && !pods.some(exitedClassified)) {
        // The Job controller saw a classified exit this view has not: its account is on the way.
        const waited = o.now - (parseTime(failed.lastTransitionTime) ?? o.now)
        if (waited < FAILED_POD_CATCH_UP_MS) return { kind: 'failure-unseen', recheckInMs: FAILED_POD_RECHECK_MS }
      }
      error = told ?? CRASH
    } else {
      // Retries ran out: a runner that failed for a transient reason said which (only storage_error).
      const transient = classifiedFailure(pods, TRANSIENT_EXIT_CODES)
      error = transient?.code === 'storage_error' ? transient : CRASH
    }
    return { kind: 'failed', error, podStartedAt }
  }
  if (podStartedAt !== null) return { kind: 'running', podStartedAt }
  // A runner image the cluster cannot pull, a container the node cannot create: the platform's
  // configuration, not the input.
  const stuck = runnerStartFailure(pods)
  if (stuck) {
    const waited = o.now - stuck.since
    if (waited < o.imagePullGraceMs)
      return { kind: 'start-failure-waiting', recheckInMs: o.imagePullGraceMs - waited + 100 }
    return {
      kind: 'failed',
      error: {
        code: 'internal',
        message: IMAGE_PULL_REASONS.has(stuck.reason)
          ? 'The utility could not be started: its runner image is not available in the cluster.'
          : 'The utility could not be started: the cluster cannot create its runner container.',
      },
      podStartedAt: null,
      stopJob: true,
    }
  }
  return { kind: 'pending' }
}
