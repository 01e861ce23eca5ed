import { ANNOTATIONS } from '../../contract/api-group.js'
import { redeliveryProblem } from '../../platform/callback-redelivery.js'
import type { CallbackAttemptEntry, CallbackDelivery, UtilityJobResource } from '../../contract/crd-schemas.js'
import { effectiveStatus } from '../../contract/job-view.js'
import { isoMs, parseTime } from '../../contract/time.js'
import { retryDelayMs, type CallbackSchedule } from './schedule.js'

/**
 * The pure side of the callback controller: which event a job calls for, what to do next, and
 * the `status.callback` block before and after each attempt. Time is passed in.
 */
export type CallbackEvent = 'job.succeeded' | 'job.failed'

/** The event a job's callback carries, or null: only async jobs with a callbackUrl that succeeded or failed. */
export function callbackEvent(uj: UtilityJobResource): CallbackEvent | null {
  if (uj.spec.mode !== 'async' || !uj.spec.callbackUrl) return null
  const state = effectiveStatus(uj).state
  if (state === 'succeeded') return 'job.succeeded'
  if (state === 'failed') return 'job.failed'
  return null // queued, running, or cancelled (which sends nothing)
}

export function initialDelivery(): CallbackDelivery {
  return {
    status: 'pending',
    attempts: 0,
    nextAttemptAt: null,
    lastAttemptAt: null,
    lastStatusCode: null,
    lastError: null,
    finishedAt: null,
  }
}

export function currentDelivery(uj: UtilityJobResource): CallbackDelivery {
  return uj.status?.callback ?? initialDelivery()
}

/** Why an attempt failed, decided where the cause is known (delivery.ts, the controller). */
export type AttemptErrorClass = 'http_status' | 'timeout' | 'connection' | 'unresolved' | 'no_secret' | 'internal'

/** The result of one attempt. `refused`: the destination is not allowed; it fails at once, without retries. */
export type AttemptOutcome =
  | { kind: 'delivered'; statusCode: number }
  | { kind: 'failed'; statusCode: number | null; error: string; errorClass: AttemptErrorClass }
  | { kind: 'refused'; error: string }

/**
 * The redelivery asked for (annotation dutil.io/redeliver, the time of the request) that no round
 * has answered yet, or null. A request made while a round was still under way is answered by
 * that round; one made after it finished starts the next.
 */
export function redeliveryRequest(uj: UtilityJobResource): string | null {
  const at = uj.metadata.annotations?.[ANNOTATIONS.redeliver]
  const asked = parseTime(at)
  // The rules the gateway and the CLI check before asking: one place (platform/callback-redelivery.ts).
  if (!at || asked === null || redeliveryProblem(uj) !== null) return null
  const d = currentDelivery(uj)
  if (d.redeliveryRequestedAt === at) return null
  const finished = parseTime(d.finishedAt)
  return finished === null || asked > finished ? at : null
}

/** The block that starts a redelivery round: the same event again, attempts counted afresh. */
export function startRedelivery(d: CallbackDelivery, requestedAt: string): CallbackDelivery {
  return { ...initialDelivery(), round: (d.round ?? 1) + 1, redeliveryRequestedAt: requestedAt }
}

/** The delivery log's entry for an attempt that began at `startedAt` and left the block `next`. */
export function attemptEntry(
  next: CallbackDelivery,
  outcome: AttemptOutcome,
  startedAt: number,
  endedAt: number,
): CallbackAttemptEntry {
  return {
    round: next.round ?? 1,
    attempt: next.attempts,
    at: isoMs(startedAt),
    durationMs: Math.max(0, endedAt - startedAt),
    outcome: next.status === 'delivered' ? 'delivered' : next.status === 'failed' ? 'failed' : 'retrying',
    statusCode: next.lastStatusCode,
    errorClass:
      outcome.kind === 'delivered' ? null : outcome.kind === 'refused' ? 'refused_destination' : outcome.errorClass,
    error: next.lastError,
    nextAttemptAt: next.nextAttemptAt,
  }
}

export type NextStep =
  | { kind: 'done' }
  | { kind: 'wait'; ms: number }
  | { kind: 'attempt' }
  /** Every attempt was claimed and the last one's outcome was never recorded (the operator stopped mid-attempt). */
  | { kind: 'give-up' }

export function nextStep(d: CallbackDelivery, now: number, schedule: CallbackSchedule): NextStep {
  if (d.status !== 'pending') return { kind: 'done' }
  const due = parseTime(d.nextAttemptAt) ?? now
  if (due > now) return { kind: 'wait', ms: due - now }
  return d.attempts >= schedule.maxAttempts ? { kind: 'give-up' } : { kind: 'attempt' }
}

/**
 * The block written (with the object's resourceVersion) before an attempt is sent. It counts
 * the attempt and moves the next due time past this attempt's timeout and back-off, so that if
 * the operator stops mid-attempt the next one still comes on schedule, never early.
 */
export function claimAttempt(d: CallbackDelivery, now: number, schedule: CallbackSchedule): CallbackDelivery {
  const attempts = d.attempts + 1
  const backOff = retryDelayMs(attempts, schedule) ?? 0
  return { ...d, attempts, lastAttemptAt: isoMs(now), nextAttemptAt: isoMs(now + schedule.timeoutMs + backOff) }
}

/** The block after a claimed attempt ended with `outcome` at `now`. */
export function afterAttempt(
  claimed: CallbackDelivery,
  outcome: AttemptOutcome,
  now: number,
  schedule: CallbackSchedule,
): CallbackDelivery {
  switch (outcome.kind) {
    case 'delivered':
      return {
        ...claimed,
        status: 'delivered',
        nextAttemptAt: null,
        lastStatusCode: outcome.statusCode,
        lastError: null,
        finishedAt: isoMs(now),
      }
    case 'refused':
      return {
        ...claimed,
        status: 'failed',
        nextAttemptAt: null,
        lastStatusCode: null,
        lastError: outcome.error,
        finishedAt: isoMs(now),
      }
    case 'failed': {
      const delay = retryDelayMs(claimed.attempts, schedule)
      const base = { ...claimed, lastStatusCode: outcome.statusCode, lastError: outcome.error }
      if (delay === null) return { ...base, status: 'failed', nextAttemptAt: null, finishedAt: isoMs(now) }
      return { ...base, status: 'pending', nextAttemptAt: isoMs(now + delay) }
    }
  }
}

/** The block when the last attempt's outcome was lost: the callback has failed. */
export function gaveUp(d: CallbackDelivery, now: number): CallbackDelivery {
  return {
    ...d,
    status: 'failed',
    nextAttemptAt: null,
    lastError: d.lastError ?? 'The outcome of the last attempt was not recorded.',
    finishedAt: isoMs(now),
  }
}
