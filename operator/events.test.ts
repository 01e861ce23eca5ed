import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { API_GROUP_VERSION } from '../contract/api-group.js'
import { eventBody, REPORTING_CONTROLLER } from './events.js'
import { transitionEvent } from './reconciler.js'

const uj = {
  apiVersion: 'dutil.io/v1',
  kind: 'UtilityJob',
  metadata: { name: 'job-01abc', namespace: 'dutil', uid: 'u-1' },
  spec: { jobId: 'job_01ABC' },
} as unknown as UtilityJobResource

describe('events', () => {
  it('builds an events.k8s.io/v1 Event about the UtilityJob, with the batch Job as related object', () => {
    const body = eventBody(
      uj,
      {
        type: 'Normal',
        reason: 'JobCreated',
        action: 'Create',
        note: 'Created batch Job x.',
        related: { apiVersion: 'batch/v1', kind: 'Job', name: 'x', uid: 'j-1' },
      },
      'job-01abc.1a2b',
      new Date(Date.UTC(2026, 0, 1)),
      'operator-0',
    )
    expect(body).toMatchObject({
      metadata: { name: 'job-01abc.1a2b', namespace: 'dutil' },
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: 'operator-0',
      regarding: {
        apiVersion: API_GROUP_VERSION,
        kind: 'UtilityJob',
        name: 'job-01abc',
        namespace: 'dutil',
        uid: 'u-1',
      },
      related: { kind: 'Job', name: 'x', namespace: 'dutil' },
      type: 'Normal',
      reason: 'JobCreated',
    })
    expect(body.eventTime.getTime()).toBe(Date.UTC(2026, 0, 1))
  })

  it('keeps notes within the 1 kB the API accepts', () => {
    expect(
      eventBody(uj, { type: 'Warning', reason: 'X', action: 'Fail', note: 'x'.repeat(5000) }, 'n', new Date(), 'i')
        .note,
    ).toHaveLength(1024)
  })

  it('has one event per state entered, a Warning with the error code for a failure', () => {
    const timings = { queueMs: 1, upstreamMs: 2, storageMs: 3, totalMs: 42 }
    const base = { startedAt: null, finishedAt: null, timings, result: null, error: null }
    expect(transitionEvent({ ...base, state: 'queued' }, 'j')).toBeNull()
    expect(transitionEvent({ ...base, state: 'succeeded', result: { files: [], extras: {} } }, 'j')).toMatchObject({
      type: 'Normal',
      reason: 'Succeeded',
      note: 'Succeeded in 42 ms: 0 files stored.',
    })
    expect(
      transitionEvent({ ...base, state: 'failed', error: { code: 'upstream_timeout', message: 'Too slow.' } }, 'j'),
    ).toMatchObject({
      type: 'Warning',
      reason: 'UpstreamTimeout',
      note: 'upstream_timeout: Too slow.',
    })
  })
})
