import type { ObjectCache } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import type { CallbackAttemptEntry, CallbackDelivery, UtilityJobResource } from '../../contract/crd-schemas.js'
import { type JobView, traceIdOfJob, traceparentOfJob } from '../../contract/job-view.js'
import { exemplarOf } from '../../platform/metrics-exposition.js'
import type { UtilityJobClient } from '../../platform/utility-job-client.js'
import { contextOf, failSpan, inSpan, jobAttributes, SpanKind, traceHeaders } from '../../platform/tracing.js'
import type { EventRecorder } from '../events.js'
import type { OperatorMetrics } from '../metrics.js'
import type { WorkQueue } from '../work-queue.js'
import {
  afterAttempt,
  attemptEntry,
  callbackEvent,
  claimAttempt,
  currentDelivery,
  gaveUp,
  nextStep,
  redeliveryRequest,
  startRedelivery,
  type AttemptOutcome,
  type CallbackEvent,
} from './callback-state.js'
import type { CallbackMessage } from './delivery.js'
import type { CallbackSchedule } from './schedule.js'
import type { SecretSource } from './signing-secrets.js'

export interface CallbackControllerDeps {
  namespace: string
  utilityJobs: ObjectCache<UtilityJobResource>
  /** Copies each written delivery state into the job record (after the status write that claims it). */
  record?: (jobId: string, delivery: CallbackDelivery) => Promise<void>
  /** Appends each attempt to the job's delivery log (the job record's callback_log). */
  recordAttempt?: (jobId: string, entry: CallbackAttemptEntry) => Promise<void>
  /** UtilityJobs on the API server: read one again, replace its status. */
  api: Pick<UtilityJobClient, 'get' | 'replaceStatus'>
  secrets: SecretSource
  /** The job exactly as `GET /v1/jobs/{id}` returns it, with fresh download links. */
  view: (uj: UtilityJobResource) => Promise<JobView>
  /** One attempt: destination check, signing, POST (operator/callbacks/delivery.ts). */
  send: (msg: CallbackMessage) => Promise<AttemptOutcome>
  schedule: CallbackSchedule
  log: Logger
  metrics?: Pick<OperatorMetrics, 'callbackAttempts' | 'callbackAttemptSeconds' | 'callbacksFinished'>
  /** An Event per outcome: delivered, retrying (with the next attempt's time), failed. */
  events?: EventRecorder
  now?: () => number
}

/** What an attempt got back, for an Event: "HTTP 503" or the error. */
function answer(d: CallbackDelivery): string {
  return d.lastError
    ? d.lastStatusCode
      ? `HTTP ${d.lastStatusCode}: ${d.lastError}`
      : d.lastError
    : `HTTP ${d.lastStatusCode}`
}

/** The receiver, without path or query (which may carry tokens). */
function receiver(url: string | undefined): string {
  try {
    return new URL(url ?? '').host
  } catch {
    return 'the callback URL'
  }
}

type Requeue = { requeueAfterMs?: number } | void

/** How many times an attempt's outcome is written again after a write conflict. */
const OUTCOME_WRITE_TRIES = 5

/**
 * Delivers the signed callback of every finished async job that has a callbackUrl. Keyed by
 * UtilityJob name and run on its own WorkQueue: a callback that is not yet due is requeued for
 * its due time (no worker waits), and attempts run concurrently up to the queue's worker
 * count, so one slow receiver never delays the others.
 *
 * Each attempt is claimed first: the counted attempt and its next due time are written with
 * the object's resourceVersion before anything is sent, so a second writer (a restarted or a
 * second operator) loses the conflict instead of sending twice, and an operator that stops
 * mid-attempt finds the next attempt on schedule. The outcome is written afterwards. Only
 * `status.callback` is ever changed; the job's own state never is.
 */
export class CallbackController {
  constructor(private readonly d: CallbackControllerDeps) {}

  private now(): number {
    return this.d.now ? this.d.now() : Date.now()
  }

  /** Whether a watch event about this object should put it on the callback queue. */
  static wants(uj: UtilityJobResource): boolean {
    return (callbackEvent(uj) !== null && currentDelivery(uj).status === 'pending') || redeliveryRequest(uj) !== null
  }

  /** Puts every job with a pending callback on `queue` (start-up and periodic resync). */
  enqueuePending(queue: WorkQueue): void {
    for (const uj of this.d.utilityJobs.list(this.d.namespace))
      if (CallbackController.wants(uj)) queue.add(uj.metadata.name)
  }

  async reconcile(name: string): Promise<Requeue> {
    const uj = this.d.utilityJobs.get(name, this.d.namespace)
    if (!uj || uj.metadata.deletionTimestamp) return
    const event = callbackEvent(uj)
    if (!event) return
    const asked = redeliveryRequest(uj)
    if (asked) {
      // Someone asked for the callback again (console or `dutil callbacks redeliver`): a new
      // round of attempts, the same event and webhook-id.
      const round = startRedelivery(currentDelivery(uj), asked)
      const saved = await this.write(uj, round)
      if (!saved) return { requeueAfterMs: 1000 }
      const log = this.d.log.child({ jobId: uj.spec.jobId, event })
      log.info({ round: round.round, requestedAt: asked }, 'callback redelivery started')
      this.d.events?.record(uj, {
        type: 'Normal',
        reason: 'CallbackRedelivery',
        action: 'Deliver',
        note: `Redelivering the ${event} callback (round ${round.round}), as asked at ${asked}.`,
      })
      return this.attempt(saved, event, round, log)
    }
    const current = currentDelivery(uj)
    const step = nextStep(current, this.now(), this.d.schedule)
    const log = this.d.log.child({ jobId: uj.spec.jobId, event })
    switch (step.kind) {
      case 'done':
        return
      case 'wait':
        return { requeueAfterMs: step.ms }
      case 'give-up': {
        const final = gaveUp(current, this.now())
        if (!(await this.write(uj, final))) return { requeueAfterMs: 1000 }
        this.d.metrics?.callbacksFinished.inc({ event, status: 'failed' })
        log.warn({ attempts: final.attempts }, 'callback failed: the last attempt was never recorded')
        this.d.events?.record(uj, {
          type: 'Warning',
          reason: 'CallbackFailed',
          action: 'Deliver',
          note: `Gave up on the ${event} callback to ${receiver(uj.spec.callbackUrl)} after ${final.attempts} attempts.`,
        })
        return
      }
      case 'attempt':
        return this.attempt(uj, event, current, log)
    }
  }

  private async attempt(
    uj: UtilityJobResource,
    event: CallbackEvent,
    current: CallbackDelivery,
    log: Logger,
  ): Promise<Requeue> {
    // Read before claiming: a failure here is retried with the queue's back-off, costing no attempt.
    const secret = await this.d.secrets.forKey(uj.spec.apiKeyId)
    const claimedAt = this.now()
    const claimed = await this.write(uj, claimAttempt(current, claimedAt, this.d.schedule))
    if (!claimed) return { requeueAfterMs: 1000 } // someone else changed it first: look again
    const delivery = claimed.status!.callback!

    let outcome: AttemptOutcome
    if (!secret) {
      outcome = {
        kind: 'failed',
        statusCode: null,
        error: 'No signing secret exists for this API key or the workspace.',
        errorClass: 'no_secret',
      }
    } else {
      let body: string | undefined
      try {
        const data = await this.d.view(claimed)
        body = JSON.stringify({
          type: event,
          timestamp: claimed.status!.finishedAt ?? new Date(claimedAt).toISOString(),
          data,
        })
      } catch (err) {
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'building the callback body failed')
      }
      outcome =
        body === undefined
          ? {
              kind: 'failed',
              statusCode: null,
              error: 'The job could not be read back for the callback.',
              errorClass: 'internal',
            }
          : await this.send(uj, event, delivery.attempts, body, secret.secret)
    }
    const endedAt = this.now()
    this.d.metrics?.callbackAttempts.inc({ event, outcome: outcome.kind })
    this.d.metrics?.callbackAttemptSeconds.observe({
      labels: { outcome: outcome.kind },
      value: (endedAt - claimedAt) / 1000,
      exemplarLabels: exemplarOf(traceIdOfJob(uj)),
    })

    const next = afterAttempt(delivery, outcome, endedAt, this.d.schedule)
    await this.writeOutcome(claimed, delivery, next)
    await this.d
      .recordAttempt?.(uj.spec.jobId, attemptEntry(next, outcome, claimedAt, endedAt))
      .catch((err) => log.warn({ err: (err as Error).message }, 'callback attempt not added to the delivery log'))
    const fields = {
      attempt: next.attempts,
      status: next.status,
      statusCode: next.lastStatusCode,
      error: next.lastError,
      secret: secret?.source,
    }
    const to = receiver(uj.spec.callbackUrl)
    if (next.status === 'delivered') {
      log.info(fields, 'callback delivered')
      this.d.events?.record(uj, {
        type: 'Normal',
        reason: 'CallbackDelivered',
        action: 'Deliver',
        note: `Delivered the ${event} callback to ${to} (${answer(next)}) on attempt ${next.attempts}.`,
      })
    } else if (next.status === 'failed') {
      log.warn(fields, 'callback failed')
      this.d.events?.record(uj, {
        type: 'Warning',
        reason: 'CallbackFailed',
        action: 'Deliver',
        note: `The ${event} callback to ${to} failed for good on attempt ${next.attempts} (${answer(next)}).`,
      })
    } else {
      log.info({ ...fields, nextAttemptAt: next.nextAttemptAt }, 'callback attempt failed, will retry')
      this.d.events?.record(uj, {
        type: 'Warning',
        reason: 'CallbackRetrying',
        action: 'Deliver',
        note: `Attempt ${next.attempts} of the ${event} callback to ${to} failed (${answer(next)}); next attempt at ${next.nextAttemptAt}.`,
      })
    }
    if (next.status !== 'pending') {
      this.d.metrics?.callbacksFinished.inc({ event, status: next.status })
      return
    }
    return { requeueAfterMs: Math.max(0, Date.parse(next.nextAttemptAt!) - this.now()) }
  }

  /**
   * One POST to the receiver, as a client span of the job's trace whose context goes with it
   * (`traceparent`): a receiver that traces continues the job's trace from this attempt.
   */
  private send(
    uj: UtilityJobResource,
    event: CallbackEvent,
    attempt: number,
    body: string,
    secret: string,
  ): Promise<AttemptOutcome> {
    const attributes = { ...jobAttributes(uj.spec), 'dutil.callback.event': event, 'dutil.callback.attempt': attempt }
    const parent = contextOf(traceparentOfJob(uj))
    return inSpan('callback attempt', { parent, kind: SpanKind.CLIENT, attributes }, async (span) => {
      const outcome = await this.d
        .send({ url: uj.spec.callbackUrl!, id: uj.spec.jobId, body, secret, traceHeaders: traceHeaders() })
        .catch((err): AttemptOutcome => ({
          kind: 'failed',
          statusCode: null,
          error: `The attempt could not be made: ${err instanceof Error ? err.message : String(err)}`,
          errorClass: 'internal',
        }))
      if (outcome.kind !== 'refused' && outcome.statusCode !== null)
        span.setAttribute('http.response.status_code', outcome.statusCode)
      if (outcome.kind !== 'delivered') failSpan(span, outcome.kind === 'refused' ? 'refused' : outcome.errorClass)
      return outcome
    })
  }

  /**
   * Writes the outcome of the attempt claimed as `claimed`. A conflict means the object changed
   * meanwhile (labels, say): re-read it and write again as long as our claim is still the
   * latest word on the callback.
   */
  private async writeOutcome(
    obj: UtilityJobResource,
    claimed: CallbackDelivery,
    next: CallbackDelivery,
  ): Promise<void> {
    let latest = obj
    for (let i = 0; i < OUTCOME_WRITE_TRIES; i++) {
      if (await this.write(latest, next)) return
      const read = await this.d.api.get(obj.metadata.name)
      const cb = read?.status?.callback
      if (
        !read ||
        !cb ||
        cb.attempts !== claimed.attempts ||
        cb.status !== 'pending' ||
        cb.lastAttemptAt !== claimed.lastAttemptAt
      ) {
        this.d.log.warn({ jobId: obj.spec.jobId }, 'callback changed by another writer; outcome not recorded')
        return
      }
      latest = read
    }
    throw new Error('the callback outcome could not be written after repeated conflicts')
  }

  /** Replaces status.callback (only) with optimistic concurrency; the written object, or null on a conflict. */
  private async write(uj: UtilityJobResource, callback: CallbackDelivery): Promise<UtilityJobResource | null> {
    const body: UtilityJobResource = { ...uj, status: { ...uj.status!, callback } }
    const saved = await this.d.api.replaceStatus(body)
    if (!saved) return null
    // The status decides who claimed an attempt (resourceVersion); the record follows it. A
    // failed copy is made good when the job is archived (the reconciler writes the final row).
    await this.d
      .record?.(uj.spec.jobId, callback)
      .catch((err) =>
        this.d.log.warn(
          { jobId: uj.spec.jobId, err: (err as Error).message },
          'callback state not copied to the job record',
        ),
      )
    return saved
  }
}
