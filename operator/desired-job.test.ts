import { describe, expect, it } from 'vitest'
import { catalog } from '../runners/catalog.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { deadlineSeconds, desiredJob } from './desired-job.js'
import { runnerSettings } from '../test/support/runner-settings.js'

const settings = runnerSettings({ imageRegistry: 'registry.example/dutil', imageTag: '1.2.3' })

function uj(spec: Partial<UtilityJobResource['spec']> = {}): UtilityJobResource {
  return {
    apiVersion: 'dutil.io/v1alpha1',
    kind: 'UtilityJob',
    metadata: { name: 'job-01abc', namespace: 'dutil', uid: 'uid-1' },
    spec: {
      jobId: 'job_01ABC',
      utility: 'split-pdf',
      mode: 'async',
      apiKeyId: 'key_1',
      apiKeyName: 'k',
      createdAt: '2026-11-22T10:00:00.000Z',
      inputKey: '_jobs/job_01ABC/input.json',
      metadata: null,
      ...spec,
    },
  }
}

const creds = {
  accessKey: 'ASIATEMP',
  secretKey: 'temp-secret',
  sessionToken: 'temp-token',
  expiresAt: '2026-11-22T10:15:00.000Z',
}

describe('desiredJob', () => {
  const split = catalog.get('split-pdf')!

  it('is named after its UtilityJob and owned by it, so a retry can never make a second one', () => {
    const job = desiredJob(uj(), split, settings, creds)
    expect(job.metadata?.name).toBe('job-01abc')
    expect(job.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'dutil.io/v1alpha1',
        kind: 'UtilityJob',
        name: 'job-01abc',
        uid: 'uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ])
    expect(desiredJob(uj(), split, settings, creds)).toEqual(job)
  })

  it('takes its time limit, retries and resources from the catalog', () => {
    const job = desiredJob(uj(), split, settings, creds)
    expect(job.spec?.activeDeadlineSeconds).toBe(900)
    expect(job.spec?.backoffLimit).toBe(split.runner.backoffLimit)
    expect(job.spec?.template.spec?.containers[0].resources).toEqual(split.runner.resources)
    expect(job.spec?.template.spec?.containers[0].image).toBe('registry.example/dutil/dutil-runner-split-pdf:1.2.3')
    expect(deadlineSeconds(uj({ utility: 'xls-to-xlsx' }), catalog.get('xls-to-xlsx')!)).toBe(300)
  })

  it('honours a shorter test deadline but never a longer one', () => {
    expect(deadlineSeconds(uj({ deadlineSeconds: 3 }), split)).toBe(3)
    expect(deadlineSeconds(uj({ deadlineSeconds: 5000 }), split)).toBe(900)
  })

  it('fails the Job at once on classified exit codes, ignores disruptions, and gives runners no token', () => {
    const job = desiredJob(uj(), split, settings, creds)
    expect(job.spec?.podFailurePolicy?.rules[0]).toEqual({
      action: 'FailJob',
      onExitCodes: { containerName: 'runner', operator: 'In', values: [10, 11, 12] },
    })
    expect(job.spec?.podFailurePolicy?.rules[1].action).toBe('Ignore')
    const pod = job.spec?.template.spec
    expect(pod?.restartPolicy).toBe('Never')
    expect(pod?.automountServiceAccountToken).toBe(false)
    expect(pod?.containers[0].securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    })
  })

  it("passes the job's own temporary storage credentials, never the platform's Secret", () => {
    const env = desiredJob(uj(), split, settings, creds).spec?.template.spec?.containers[0].env ?? []
    expect(env.filter((e) => e.valueFrom?.secretKeyRef)).toEqual([])
    expect(
      Object.fromEntries(env.filter((e) => e.name.startsWith('DUTIL_S3_')).map((e) => [e.name, e.value])),
    ).toMatchObject({
      DUTIL_S3_ACCESS_KEY: 'ASIATEMP',
      DUTIL_S3_SECRET_KEY: 'temp-secret',
      DUTIL_S3_SESSION_TOKEN: 'temp-token',
    })
    expect(env.find((e) => e.name === 'DUTIL_JOB_ID')?.value).toBe('job_01ABC')
    expect(env.find((e) => e.name === 'DUTIL_ALLOW_LOOPBACK_URLS')?.value).toBe('false')
  })
})

describe('desiredJob and tracing', () => {
  const split = catalog.get('split-pdf')!
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
  const traced = (): UtilityJobResource => {
    const j = uj()
    j.metadata.annotations = { 'dutil.io/traceparent': traceparent }
    return j
  }
  const envOf = (job: ReturnType<typeof desiredJob>) =>
    Object.fromEntries(job.spec!.template.spec!.containers[0].env!.map((e) => [e.name, e.value]))

  it("hands a traced job's context and the collector to its runner", () => {
    const tracing = { endpoint: 'http://collector.observability:4318', servicePrefix: 'acme-' }
    const env = envOf(desiredJob(traced(), split, { ...settings, tracing }, creds))
    expect(env).toMatchObject({
      TRACEPARENT: traceparent,
      DUTIL_TRACING_ENDPOINT: 'http://collector.observability:4318',
      DUTIL_TRACING_SERVICE_NAME: 'acme-runner-split-pdf',
    })
  })

  it('gives the runner nothing of tracing when tracing is off or the job was not traced', () => {
    const tracing = { endpoint: 'http://collector.observability:4318', servicePrefix: 'dutil-' }
    for (const job of [
      desiredJob(traced(), split, settings, creds),
      desiredJob(uj(), split, { ...settings, tracing }, creds),
    ]) {
      const names = Object.keys(envOf(job))
      expect(names.filter((n) => n.includes('TRAC'))).toEqual([])
    }
  })
})
