import { describe, expect, it } from 'vitest'
import * as Minio from 'minio'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { catalog } from '../contract/catalog.js'
import { desiredJob, type RunnerSettings } from './desired-job.js'
import { storageGrantFor } from './storage-grant.js'

const settings: RunnerSettings = {
  imageRegistry: 'ghcr.io/dutil',
  imageTag: 'v1',
  storage: { endpoint: 'http://minio:9000', region: 'us-east-1', bucket: 'dutil', secretName: 'dutil-storage' },
  allowLoopbackUrls: false,
  jobTtlSeconds: 3600,
}

function utilityJob(utility: string): UtilityJobResource {
  return {
    apiVersion: 'dutil.dev/v1',
    kind: 'UtilityJob',
    metadata: { name: 'job-01m8abc', namespace: 'dutil', uid: 'uid-1' },
    spec: { jobId: 'job_01M8ABCDEFGHJKMNPQRSTVWXYZ', utility, mode: 'async', apiKeyId: 'key_1', apiKeyName: 'k', createdAt: '2026-11-22T10:00:00.000Z', inputKey: '_jobs/x/input.json', metadata: null },
  }
}

const envNames = (job: ReturnType<typeof desiredJob>) => job.spec!.template.spec!.containers[0].env!.map((e) => e.name)

describe('desiredJob', () => {
  it('gives bucket credentials, the per-utility limits and node flags to an ordinary runner', () => {
    const zip = catalog.get('zip-files')!
    const job = desiredJob(utilityJob('zip-files'), zip, settings)
    const c = job.spec!.template.spec!.containers[0]
    expect(envNames(job)).toEqual(expect.arrayContaining(['DUTIL_S3_ACCESS_KEY', 'DUTIL_S3_SECRET_KEY']))
    expect(c.resources).toEqual(zip.runner.resources)
    expect(c.command).toEqual(['node', '--max-old-space-size=128', '--max-semi-space-size=1', '/app/dist/runners/zip-files/main.js'])
    expect(job.spec!.activeDeadlineSeconds).toBe(900)
  })

  it('mounts a scratch emptyDir on /tmp for runners that need one (read-only root filesystem)', () => {
    const job = desiredJob(utilityJob('unzip-files'), catalog.get('unzip-files')!, settings)
    const pod = job.spec!.template.spec!
    expect(pod.volumes).toEqual([{ name: 'scratch', emptyDir: { sizeLimit: '1200Mi' } }])
    expect(pod.containers[0].volumeMounts).toEqual([{ name: 'scratch', mountPath: '/tmp' }])
    expect(pod.containers[0].securityContext?.readOnlyRootFilesystem).toBe(true)
    expect(pod.containers[0].env).toEqual(expect.arrayContaining([{ name: 'TMPDIR', value: '/tmp' }]))
  })

  it('gives a scoped runner (xls-to-xlsx) its grant and no storage credentials at all', async () => {
    const xls = catalog.get('xls-to-xlsx')!
    const uj = utilityJob('xls-to-xlsx')
    expect(() => desiredJob(uj, xls, settings)).toThrow('needs a grant')
    const presigner = new Minio.Client({ endPoint: 'minio', port: 9000, useSSL: false, region: 'us-east-1', accessKey: 'AK', secretKey: 'SECRET-never-in-the-job', pathStyle: true })
    const grant = await storageGrantFor(uj, xls, presigner, 'dutil', new Date('2026-11-22T10:00:01Z'))
    const job = desiredJob(uj, xls, settings, grant)
    const env = job.spec!.template.spec!.containers[0].env!
    expect(envNames(job)).not.toContain('DUTIL_S3_ACCESS_KEY')
    expect(envNames(job)).not.toContain('DUTIL_S3_SECRET_KEY')
    expect(JSON.stringify(job)).not.toContain('SECRET-never-in-the-job')
    const granted = JSON.parse(env.find((e) => e.name === 'DUTIL_STORAGE_GRANT')!.value!)
    expect(granted.outputs.prefix).toBe('xls-to-xlsx/2026-11-22/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/')
    const policy = JSON.parse(Buffer.from(granted.outputs.fields.policy, 'base64').toString())
    expect(policy.conditions).toEqual(expect.arrayContaining([['starts-with', '$key', granted.outputs.prefix], ['content-length-range', 0, 200 * 1024 * 1024]]))
    // Valid for the deadline (300 s) plus ten minutes, not for days.
    expect(Date.parse(granted.expiresAt) - Date.parse('2026-11-22T10:00:01Z')).toBe(900_000)
    expect(granted.input.url).toContain('/dutil/_jobs/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/input.json?')
    expect(granted.result.url).toContain('X-Amz-Expires=900')
  })
})
