import { describe, expect, it } from 'vitest'
import { poolAssignment } from '../test/support/pool-assignment.js'
import { parseAssignment, parseJobState } from './pool-protocol.js'
import { POOL, SEALED_INPUT_MAX_CHARS } from '../contract/runner-protocol.js'

const assignment = poolAssignment

describe('parseAssignment', () => {
  it('reads a well-formed assignment', () => {
    expect(parseAssignment(JSON.stringify(assignment()))).toEqual(assignment())
  })
  it("carries the key of a job's sealed input when it has one", () => {
    const a = assignment()
    const sealed = { ...a, credentials: { ...a.credentials, sealKey: 'k3y' } }
    expect(parseAssignment(JSON.stringify(sealed))).toEqual(sealed)
    expect(parseAssignment(JSON.stringify({ ...a, credentials: { ...a.credentials, sealKey: 7 } }))).toEqual(a)
  })
  it('carries a sealed input that rides with its job, within its bound', () => {
    const riding = { ...assignment(), sealedInput: 'v1.bm9uY2U.Y2lwaGVy' }
    expect(parseAssignment(JSON.stringify(riding))).toEqual(riding)
    expect(parseAssignment(JSON.stringify({ ...assignment(), sealedInput: 42 }))).toBe(
      'sealedInput is not a sealed input',
    )
    const oversized = { ...assignment(), sealedInput: 'x'.repeat(SEALED_INPUT_MAX_CHARS + 1) }
    expect(parseAssignment(JSON.stringify(oversized))).toBe('sealedInput is not a sealed input')
    expect(JSON.stringify({ ...assignment(), sealedInput: 'x'.repeat(SEALED_INPUT_MAX_CHARS) }).length).toBeLessThan(
      POOL.maxAssignmentBytes,
    )
  })
  it('says what is wrong with a bad one', () => {
    expect(parseAssignment('nope')).toBe('the assignment is not JSON')
    expect(parseAssignment('['.repeat(100))).toBe('the assignment nests too deep')
    expect(parseAssignment(JSON.stringify(assignment({ jobId: '../x' })))).toBe('jobId is missing or malformed')
    expect(parseAssignment(JSON.stringify(assignment({ deadlineSeconds: 0 })))).toBe(
      'deadlineSeconds is not a whole number',
    )
    expect(parseAssignment(JSON.stringify({ ...assignment(), credentials: {} }))).toBe('credentials are missing')
  })
})

describe('parseJobState', () => {
  it('reads states and refuses anything else', () => {
    expect(parseJobState('{"jobId":"j","state":"running"}')).toEqual({ jobId: 'j', state: 'running' })
    expect(
      parseJobState(
        '{"jobId":"j","state":"failed","failure":{"code":"upstream_rejected","message":"m","upstreamStatus":404}}',
      ),
    ).toEqual({
      jobId: 'j',
      state: 'failed',
      failure: { code: 'upstream_rejected', message: 'm', upstreamStatus: 404 },
    })
    expect(parseJobState('{"jobId":"j","state":"failed","failure":{"code":"made_up","message":"m"}}')).toBeNull()
    expect(parseJobState('{"jobId":"j","state":"done"}')).toBeNull()
    // A succeeded job's answered manifest is passed on as it came (the operator checks it).
    expect(parseJobState('{"jobId":"j","state":"succeeded","result":{"files":"anything"}}')).toEqual({
      jobId: 'j',
      state: 'succeeded',
      result: { files: 'anything' },
    })
    expect(parseJobState(`{"jobId":"j","state":"succeeded","result":${'['.repeat(100)}${']'.repeat(100)}}`)).toBeNull()
    expect(parseJobState('not json')).toBeNull()
  })
})
