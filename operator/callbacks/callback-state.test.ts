import { describe, expect, it } from 'vitest'
import type { UtilityJobResource, UtilityJobStatus } from '../../contract/crd-schemas.js'
import {
  afterAttempt,
  attemptEntry,
  callbackEvent,
  claimAttempt,
  gaveUp,
  initialDelivery,
  nextStep,
  redeliveryRequest,
  startRedelivery,
} from './callback-state.js'
import { redeliveryProblem } from '../../platform/callback-redelivery.js'
import type { CallbackDelivery } from '../../contract/crd-schemas.js'
import { CALLBACK_SCHEDULE } from './schedule.js'

const T0 = Date.parse('2026-03-01T10:00:00.000Z')
const iso = (ms: number) => new Date(ms).toISOString()

function job(
  mode: 'sync' | 'async',
  state: UtilityJobStatus['state'] | undefined,
  callbackUrl?: string,
): UtilityJobResource {
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: 'job-x' },
    spec: {
      jobId: 'job_X',
      utility: 'split-pdf',
      mode,
      apiKeyId: 'key_K',
      apiKeyName: 'k',
      createdAt: iso(T0),
      inputKey: 'in',
      metadata: null,
      ...(callbackUrl ? { callbackUrl } : {}),
    },
    ...(state
      ? {
          status: {
            state,
            startedAt: null,
            finishedAt: null,
            timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: null },
            result: null,
            error: null,
          },
        }
      : {}),
  }
}

describe('callbackEvent', () => {
  const url = 'https://hooks.example.com/'
  it('is job.succeeded / job.failed for finished async jobs with a callbackUrl', () => {
    expect(callbackEvent(job('async', 'succeeded', url))).toBe('job.succeeded')
    expect(callbackEvent(job('async', 'failed', url))).toBe('job.failed')
  })
  it('is null for unfinished, cancelled, sync and callback-less jobs', () => {
    expect(callbackEvent(job('async', undefined, url))).toBeNull()
    expect(callbackEvent(job('async', 'queued', url))).toBeNull()
    expect(callbackEvent(job('async', 'running', url))).toBeNull()
    expect(callbackEvent(job('async', 'cancelled', url))).toBeNull()
    expect(callbackEvent(job('sync', 'succeeded', url))).toBeNull()
    expect(callbackEvent(job('async', 'succeeded'))).toBeNull()
  })
})

describe('delivery bookkeeping', () => {
  const s = CALLBACK_SCHEDULE

  it('attempts a fresh callback at once', () => {
    expect(nextStep(initialDelivery(), T0, s)).toEqual({ kind: 'attempt' })
  })

  it('claims an attempt before sending: counted, and the next due time past timeout and back-off', () => {
    const claimed = claimAttempt(initialDelivery(), T0, s)
    expect(claimed).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastAttemptAt: iso(T0),
      nextAttemptAt: iso(T0 + 10_000 + 10_000),
    })
    // An operator that stops mid-attempt and restarts at once waits for that time.
    expect(nextStep(claimed, T0 + 1000, s)).toEqual({ kind: 'wait', ms: 19_000 })
  })

  it('records a delivery', () => {
    const claimed = claimAttempt(initialDelivery(), T0, s)
    expect(afterAttempt(claimed, { kind: 'delivered', statusCode: 204 }, T0 + 50, s)).toEqual({
      status: 'delivered',
      attempts: 1,
      nextAttemptAt: null,
      lastAttemptAt: iso(T0),
      lastStatusCode: 204,
      lastError: null,
      finishedAt: iso(T0 + 50),
    })
  })

  it('schedules a retry 10 s after the first failure, 20 s after the second', () => {
    let d = claimAttempt(initialDelivery(), T0, s)
    d = afterAttempt(
      d,
      { kind: 'failed', statusCode: 500, error: 'answered 500', errorClass: 'http_status' },
      T0 + 100,
      s,
    )
    expect(d).toMatchObject({
      status: 'pending',
      attempts: 1,
      nextAttemptAt: iso(T0 + 10_100),
      lastStatusCode: 500,
      lastError: 'answered 500',
    })
    expect(nextStep(d, T0 + 10_099, s)).toEqual({ kind: 'wait', ms: 1 })
    expect(nextStep(d, T0 + 10_100, s)).toEqual({ kind: 'attempt' })
    d = afterAttempt(
      claimAttempt(d, T0 + 10_100, s),
      { kind: 'failed', statusCode: null, error: 'timed out', errorClass: 'timeout' },
      T0 + 20_100,
      s,
    )
    expect(d).toMatchObject({ status: 'pending', attempts: 2, nextAttemptAt: iso(T0 + 40_100), lastStatusCode: null })
  })

  it('fails after the eighth failed attempt, and never changes anything afterwards', () => {
    let d = initialDelivery()
    let now = T0
    for (let i = 1; i <= 8; i++) {
      expect(nextStep(d, now, s)).toEqual({ kind: 'attempt' })
      d = afterAttempt(
        claimAttempt(d, now, s),
        { kind: 'failed', statusCode: 503, error: 'answered 503', errorClass: 'http_status' },
        now,
        s,
      )
      now = Date.parse(d.nextAttemptAt ?? iso(now))
    }
    expect(d).toMatchObject({ status: 'failed', attempts: 8, nextAttemptAt: null, finishedAt: expect.any(String) })
    expect(Date.parse(d.finishedAt!) - T0).toBe(1_270_000)
    expect(nextStep(d, now + 1e9, s)).toEqual({ kind: 'done' })
  })

  it('fails a refused destination at once, without retries', () => {
    const d = afterAttempt(claimAttempt(initialDelivery(), T0, s), { kind: 'refused', error: 'not allowed' }, T0, s)
    expect(d).toMatchObject({ status: 'failed', attempts: 1, nextAttemptAt: null, lastError: 'not allowed' })
  })

  it('gives up when the last claimed attempt was never recorded', () => {
    let d = initialDelivery()
    for (let i = 0; i < 7; i++)
      d = afterAttempt(
        claimAttempt(d, T0, s),
        { kind: 'failed', statusCode: 500, error: 'e', errorClass: 'http_status' },
        T0,
        s,
      )
    const lastClaim = claimAttempt(d, T0, s)
    expect(lastClaim.nextAttemptAt).toBe(iso(T0 + 10_000))
    expect(nextStep(lastClaim, T0 + 10_000, s)).toEqual({ kind: 'give-up' })
    expect(gaveUp(lastClaim, T0 + 10_000)).toMatchObject({ status: 'failed', attempts: 8, nextAttemptAt: null })
  })
})

describe('redelivery', () => {
  const url = 'https://hooks.example.com/'
  const s = CALLBACK_SCHEDULE
  const withCallback = (d: CallbackDelivery, annotation?: string): UtilityJobResource => {
    const j = job('async', 'succeeded', url)
    return {
      ...j,
      metadata: { ...j.metadata, ...(annotation ? { annotations: { 'dutil.io/redeliver': annotation } } : {}) },
      status: { ...j.status!, callback: d },
    }
  }
  const failed = afterAttempt(
    claimAttempt(initialDelivery(), T0, s),
    { kind: 'refused', error: 'not allowed' },
    T0 + 5,
    s,
  )

  it('starts a new round for a request made after the last round ended, once', () => {
    const asked = iso(T0 + 60_000)
    expect(redeliveryRequest(withCallback(failed, asked))).toBe(asked)
    const round2 = startRedelivery(failed, asked)
    expect(round2).toMatchObject({
      status: 'pending',
      attempts: 0,
      round: 2,
      redeliveryRequestedAt: asked,
      lastError: null,
      finishedAt: null,
    })
    // The same request is not answered twice, whatever the round ends with.
    const ended = afterAttempt(
      claimAttempt(round2, T0 + 61_000, s),
      { kind: 'delivered', statusCode: 200 },
      T0 + 61_100,
      s,
    )
    expect(redeliveryRequest(withCallback(ended, asked))).toBeNull()
  })

  it('ignores requests made while a round was under way, requests for jobs without a callback, and a spent budget', () => {
    const pending = claimAttempt(initialDelivery(), T0, s)
    expect(redeliveryRequest(withCallback(pending, iso(T0 + 1)))).toBeNull()
    expect(redeliveryRequest(withCallback(failed, iso(T0)))).toBeNull() // asked before the round ended
    expect(redeliveryRequest(withCallback({ ...failed, round: 10 }, iso(T0 + 60_000)))).toBeNull()
    expect(
      redeliveryRequest({
        ...job('sync', 'succeeded', url),
        metadata: { name: 'x', annotations: { 'dutil.io/redeliver': iso(T0 + 60_000) } },
      }),
    ).toBeNull()
  })

  it('says why a job cannot be redelivered', () => {
    expect(redeliveryProblem(undefined)).toMatch(/left the cluster/)
    expect(redeliveryProblem(job('async', 'succeeded'))).toBe('The job has no callback.')
    expect(redeliveryProblem(job('async', 'running', url))).toMatch(/not finished/)
    expect(redeliveryProblem(job('async', 'cancelled', url))).toMatch(/cancelled job sends no callback/)
    expect(redeliveryProblem(withCallback(claimAttempt(initialDelivery(), T0, s)))).toMatch(/under way \(attempt 1\)/)
    expect(redeliveryProblem(withCallback({ ...failed, round: 10 }))).toMatch(/10 rounds/)
    expect(redeliveryProblem(withCallback(failed))).toBeNull()
  })

  it('logs each attempt with its round, answer, error class and what came next', () => {
    const claimed = claimAttempt(startRedelivery(failed, iso(T0)), T0 + 1000, s)
    const next = afterAttempt(
      claimed,
      { kind: 'failed', statusCode: 503, error: 'The receiver answered 503.', errorClass: 'http_status' },
      T0 + 1250,
      s,
    )
    expect(
      attemptEntry(
        next,
        { kind: 'failed', statusCode: 503, error: 'x', errorClass: 'http_status' },
        T0 + 1000,
        T0 + 1250,
      ),
    ).toEqual({
      round: 2,
      attempt: 1,
      at: iso(T0 + 1000),
      durationMs: 250,
      outcome: 'retrying',
      statusCode: 503,
      errorClass: 'http_status',
      error: 'The receiver answered 503.',
      nextAttemptAt: next.nextAttemptAt,
    })
    expect(attemptEntry(failed, { kind: 'refused', error: 'not allowed' }, T0, T0 + 5)).toMatchObject({
      round: 1,
      outcome: 'failed',
      errorClass: 'refused_destination',
      statusCode: null,
    })
  })
})
