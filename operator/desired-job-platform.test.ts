import { describe, expect, it } from 'vitest'
import { catalog } from '../runners/catalog.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { parseRunnerResources } from './config.js'
import { desiredJob } from './desired-job.js'
import { runnerSettings } from '../test/support/runner-settings.js'

const uj: UtilityJobResource = {
  apiVersion: 'dutil.io/v1alpha1',
  kind: 'UtilityJob',
  metadata: { name: 'job-01jq0000000000000000000000', namespace: 'dutil', uid: 'u-1' },
  spec: {
    jobId: 'job_01JQ0000000000000000000000',
    utility: 'split-pdf',
    mode: 'async',
    apiKeyId: 'key_x',
    apiKeyName: 'k',
    createdAt: '2026-03-01T00:00:00.000Z',
    inputKey: '_jobs/job_01JQ0000000000000000000000/input.json',
    metadata: null,
  },
}
const settings = runnerSettings({ imageRegistry: 'registry.example.com/dutil', imageTag: '1.2.3', jobTtlSeconds: 60 })
const splitPdf = catalog.get('split-pdf')!

describe('desiredJob with chart settings', () => {
  it('uses per-utility resources from the settings when given (the chart values runners.<slug>.resources)', () => {
    const resources = { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '2', memory: '4Gi' } }
    const pod = desiredJob(
      uj,
      splitPdf,
      { ...settings, resources: { 'split-pdf': resources } },
      {
        accessKey: 'ASIATEMP',
        secretKey: 'temp-secret',
        sessionToken: 'temp-token',
        expiresAt: '2026-11-22T10:15:00.000Z',
      },
    ).spec!.template.spec!
    expect(pod.containers[0].resources).toEqual(resources)
  })
})

describe('parseRunnerResources', () => {
  it('reads per-utility requests and limits', () => {
    expect(
      parseRunnerResources(
        '{"split-pdf":{"requests":{"cpu":"250m","memory":"512Mi"},"limits":{"cpu":"1","memory":"2Gi"}}}',
      ),
    ).toEqual({
      'split-pdf': { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '2Gi' } },
    })
    expect(parseRunnerResources(undefined)).toEqual({})
  })

  it('fails loudly on a missing or malformed quantity', () => {
    expect(() =>
      parseRunnerResources('{"split-pdf":{"requests":{"cpu":"250m"},"limits":{"cpu":"1","memory":"2Gi"}}}'),
    ).toThrow(/split-pdf.requests.memory/)
    expect(() =>
      parseRunnerResources(
        '{"split-pdf":{"requests":{"cpu":"lots","memory":"1Gi"},"limits":{"cpu":"1","memory":"2Gi"}}}',
      ),
    ).toThrow(/split-pdf.requests.cpu/)
    expect(() => parseRunnerResources('[]')).toThrow(/JSON object/)
  })
})
