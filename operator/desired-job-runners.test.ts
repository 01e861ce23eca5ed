import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { catalog } from '../runners/catalog.js'
import { desiredJob } from './desired-job.js'
import { MAX_SESSION_POLICY_CHARS, runnerPolicy, sessionSeconds } from './runner-credentials.js'
import { MERGE_PDF_LIMITS } from '../runners/merge-pdf/limits.js'
import { runnerSettings } from '../test/support/runner-settings.js'

const settings = runnerSettings()

function utilityJob(utility: string): UtilityJobResource {
  return {
    apiVersion: 'dutil.dev/v1',
    kind: 'UtilityJob',
    metadata: { name: 'job-01m8abc', namespace: 'dutil', uid: 'uid-1' },
    spec: {
      jobId: 'job_01M8ABCDEFGHJKMNPQRSTVWXYZ',
      utility,
      mode: 'async',
      apiKeyId: 'key_1',
      apiKeyName: 'k',
      createdAt: '2026-11-22T10:00:00.000Z',
      inputKey: '_jobs/x/input.json',
      metadata: null,
    },
  }
}

const creds = {
  accessKey: 'ASIATEMP',
  secretKey: 'temp-secret',
  sessionToken: 'temp-token',
  expiresAt: '2026-11-22T10:15:00.000Z',
}
const envNames = (job: ReturnType<typeof desiredJob>) => job.spec!.template.spec!.containers[0].env!.map((e) => e.name)

describe('desiredJob', () => {
  it("gives the job's own temporary credentials, the per-utility limits and node flags to an ordinary runner", () => {
    const zip = catalog.get('zip-files')!
    const job = desiredJob(utilityJob('zip-files'), zip, settings, creds)
    const c = job.spec!.template.spec!.containers[0]
    expect(envNames(job)).toEqual(
      expect.arrayContaining(['DUTIL_S3_ACCESS_KEY', 'DUTIL_S3_SECRET_KEY', 'DUTIL_S3_SESSION_TOKEN']),
    )
    expect(c.resources).toEqual(zip.runner.resources)
    expect(c.command).toEqual([
      'node',
      '--max-old-space-size=128',
      '--max-semi-space-size=1',
      '--expose-gc',
      '--no-opt',
      '/app/dist/runners/zip-files/bundle/main.js',
    ])
    expect(job.spec!.activeDeadlineSeconds).toBe(900)
  })

  it('mounts a scratch emptyDir on /tmp for runners that need one (read-only root filesystem)', () => {
    const job = desiredJob(utilityJob('unzip-files'), catalog.get('unzip-files')!, settings, creds)
    const pod = job.spec!.template.spec!
    expect(pod.volumes).toEqual([{ name: 'scratch', emptyDir: { sizeLimit: '1200Mi' } }])
    expect(pod.containers[0].volumeMounts).toEqual([{ name: 'scratch', mountPath: '/tmp' }])
    expect(pod.containers[0].securityContext?.readOnlyRootFilesystem).toBe(true)
    expect(pod.containers[0].env).toEqual(expect.arrayContaining([{ name: 'TMPDIR', value: '/tmp' }]))
  })

  it("scopes every runner's credentials to its own job: read its input and checked s3:// inputs, write its prefix, manifest and progress report, nothing else", () => {
    const uj = utilityJob('xls-to-xlsx')
    uj.spec.storageInputKeys = ['zip-files/2026-11-21/job_01M8ZZZZZZZZZZZZZZZZZZZZZZ/files.zip']
    const policy = runnerPolicy(uj, catalog.get('xls-to-xlsx')!, 'dutil')
    expect(policy.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: ['s3:GetObject'],
        Resource: [
          'arn:aws:s3:::dutil/_jobs/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/input.json',
          'arn:aws:s3:::dutil/zip-files/2026-11-21/job_01M8ZZZZZZZZZZZZZZZZZZZZZZ/files.zip',
        ],
      },
      {
        Effect: 'Allow',
        Action: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts', 's3:DeleteObject'],
        Resource: ['arn:aws:s3:::dutil/xls-to-xlsx/2026-11-22/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/*'],
      },
      {
        Effect: 'Allow',
        Action: ['s3:PutObject'],
        Resource: ['arn:aws:s3:::dutil/_jobs/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/result.json'],
      },
      {
        Effect: 'Allow',
        Action: ['s3:PutObject', 's3:DeleteObject'],
        Resource: ['arn:aws:s3:::dutil/_jobs/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/progress.json'],
      },
    ])
    // No listing, no bucket-level action, no wildcard outside the own prefix.
    expect(JSON.stringify(policy)).not.toMatch(/ListBucket|s3:\*|:::dutil\/\*|:::dutil"/)
    // Valid for the deadline (300 s) plus ten minutes (and at least STS's 15 minutes).
    expect(sessionSeconds(uj, catalog.get('xls-to-xlsx')!)).toBe(900)
    expect(sessionSeconds(utilityJob('zip-files'), catalog.get('zip-files')!)).toBe(1500)
  })

  it('refuses to grant a key that would act as a wildcard', () => {
    const uj = utilityJob('split-pdf')
    uj.spec.storageInputKeys = ['split-pdf/2026-11-21/job_01M8ZZZZZZZZZZZZZZZZZZZZZZ/*']
    expect(() => runnerPolicy(uj, catalog.get('split-pdf')!, 'dutil')).toThrow('wildcard')
  })

  it("reads two or more inputs of one source job through that job's prefix, so many pages of one job fit the policy", () => {
    const uj = utilityJob('merge-pdf')
    const source = 'split-pdf/2026-11-21/job_01M8ZZZZZZZZZZZZZZZZZZZZZZ/'
    const alone = 'html-pdf/2026-11-21/job_01M8YYYYYYYYYYYYYYYYYYYYYY/page.pdf'
    uj.spec.storageInputKeys = [
      ...Array.from({ length: 100 }, (_, i) => `${source}page-${String(i + 1).padStart(3, '0')}.pdf`),
      alone,
    ]
    const reads = runnerPolicy(uj, catalog.get('merge-pdf')!, 'dutil').Statement[0].Resource
    expect(reads).toEqual([
      'arn:aws:s3:::dutil/_jobs/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/input.json',
      `arn:aws:s3:::dutil/${source}*`,
      `arn:aws:s3:::dutil/${alone}`,
    ])
  })

  it(`stays within the storage service's ${MAX_SESSION_POLICY_CHARS}-character policy cap with s3:// inputs from merge-pdf's most source jobs`, () => {
    const uj = utilityJob('merge-pdf')
    // The longest slugs, two files of each job (a prefix each), a 48-character bucket name (the
    // chart's values document the bound).
    uj.spec.storageInputKeys = Array.from({ length: MERGE_PDF_LIMITS.maxStorageSourceJobs }, (_, i) =>
      ['a', 'b'].map((f) => `unzip-files/2026-11-21/job_01M8ZZZZZZZZZZZZZZZZZZZ${String(i).padStart(3, '0')}/${f}`),
    ).flat()
    const policy = runnerPolicy(uj, catalog.get('merge-pdf')!, 'b'.repeat(48))
    expect(policy.Statement[0].Resource).toHaveLength(1 + MERGE_PDF_LIMITS.maxStorageSourceJobs)
    expect(JSON.stringify(policy).length).toBeLessThanOrEqual(MAX_SESSION_POLICY_CHARS)
  })

  it('never puts the platform storage Secret in a runner pod', () => {
    for (const u of catalog.values()) {
      const job = desiredJob(utilityJob(u.slug), u, settings, creds)
      const env = job.spec!.template.spec!.containers[0].env!
      expect(env.filter((e) => e.valueFrom)).toEqual([])
      expect(env.find((e) => e.name === 'DUTIL_S3_SESSION_TOKEN')?.value).toBe('temp-token')
    }
  })
})
