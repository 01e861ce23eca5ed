import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { asResource } from './job-reader.js'

const spec: UtilityJobResource['spec'] = {
  jobId: 'job_01JTEST0000000000000000000',
  utility: 'split-pdf',
  mode: 'sync',
  apiKeyId: 'key_1',
  apiKeyName: 'k',
  createdAt: '2026-11-26T10:00:00.000Z',
  inputKey: '_jobs/job_01JTEST0000000000000000000/input.json',
  metadata: null,
}

describe('asResource', () => {
  it("names a record from the job's row, keeping the annotations it has (a traced job's context)", () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    const fromRow = asResource({ spec, metadata: { annotations: { 'dutil.io/traceparent': traceparent } } })
    expect(fromRow.metadata).toEqual({
      name: 'job-01jtest0000000000000000000',
      annotations: { 'dutil.io/traceparent': traceparent },
    })
    expect(asResource({ spec }).metadata).toEqual({ name: 'job-01jtest0000000000000000000' })
  })

  it('keeps a UtilityJob as it is', () => {
    const live: UtilityJobResource = {
      apiVersion: 'dutil.io/v1alpha1',
      kind: 'UtilityJob',
      metadata: { name: 'job-01jtest0000000000000000000', resourceVersion: '7' },
      spec,
    }
    expect(asResource(live)).toBe(live)
  })
})
