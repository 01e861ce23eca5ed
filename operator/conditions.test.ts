import { describe, expect, it } from 'vitest'
import type { UtilityJobStatus } from '../contract/crd-schemas.js'
import { type ConditionInputs, nextConditions, reasonOf, wasAdmitted } from './conditions.js'

const timings = { queueMs: null, upstreamMs: null, storageMs: null, totalMs: null }
const status = (state: UtilityJobStatus['state'], extra: Partial<UtilityJobStatus> = {}): UtilityJobStatus => ({
  state,
  startedAt: null,
  finishedAt: null,
  timings,
  result: null,
  error: null,
  ...extra,
})
const inputs = (s: UtilityJobStatus, over: Partial<ConditionInputs> = {}): ConditionInputs => ({
  status: s,
  previous: undefined,
  admitted: false,
  jobName: 'uj-1',
  utility: 'split-pdf',
  generation: 1,
  now: Date.UTC(2026, 0, 1, 10),
  ...over,
})
const byType = (cs: ReturnType<typeof nextConditions>) => Object.fromEntries(cs.map((c) => [c.type, c]))

describe('conditions', () => {
  it('a queued job waiting for a slot: not admitted, nothing true', () => {
    const c = byType(nextConditions(inputs(status('queued'))))
    expect(c.Admitted).toMatchObject({
      status: 'False',
      reason: 'Queued',
      message: 'Waiting for a run slot of split-pdf.',
      observedGeneration: 1,
      lastTransitionTime: '2026-01-01T10:00:00Z',
    })
    expect([c.Running.status, c.Succeeded.status, c.Failed.status]).toEqual(['False', 'False', 'False'])
  })

  it('keeps lastTransitionTime while a condition holds and moves it when it flips', () => {
    const admitted = nextConditions(inputs(status('queued'), { admitted: true }))
    const running = nextConditions(
      inputs(status('running'), { previous: admitted, admitted: true, now: Date.UTC(2026, 0, 1, 10, 0, 5) }),
    )
    const c = byType(running)
    expect(c.Admitted.lastTransitionTime).toBe('2026-01-01T10:00:00Z')
    expect(c.Running).toMatchObject({
      status: 'True',
      reason: 'RunnerStarted',
      lastTransitionTime: '2026-01-01T10:00:05Z',
    })
    expect(c.Succeeded.lastTransitionTime).toBe('2026-01-01T10:00:00Z')
    expect(wasAdmitted(running)).toBe(true)
  })

  it('a succeeded job: Succeeded True with the file count, Running False', () => {
    const files = [{ key: 'k', name: 'a.pdf', size: 1, contentType: 'application/pdf' }]
    const c = byType(nextConditions(inputs(status('succeeded', { result: { files, extras: {} } }), { admitted: true })))
    expect(c.Succeeded).toMatchObject({
      status: 'True',
      reason: 'Succeeded',
      message: 'The job succeeded: 1 file stored.',
    })
    expect(c.Running).toMatchObject({ status: 'False', reason: 'Succeeded' })
  })

  it("a failed job: Failed True with the error code as reason and the error's message", () => {
    const c = byType(
      nextConditions(
        inputs(status('failed', { error: { code: 'upstream_rejected', message: 'The file is not a valid PDF.' } }), {
          admitted: true,
        }),
      ),
    )
    expect(c.Failed).toMatchObject({
      status: 'True',
      reason: 'UpstreamRejected',
      message: 'The file is not a valid PDF.',
    })
    expect(c.Succeeded).toMatchObject({ status: 'False', reason: 'Failed' })
  })

  it('a job cancelled while queued was never admitted', () => {
    expect(byType(nextConditions(inputs(status('cancelled')))).Admitted).toMatchObject({
      status: 'False',
      reason: 'Cancelled',
    })
  })

  it('turns error codes into condition reasons Kubernetes accepts', () => {
    for (const code of ['upstream_rejected', 'upstream_timeout', 'storage_error', 'lost', 'internal'])
      expect(reasonOf(code)).toMatch(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    expect(reasonOf('storage_error')).toBe('StorageError')
    expect(reasonOf('1bad')).toBe('Error1bad')
  })
})
