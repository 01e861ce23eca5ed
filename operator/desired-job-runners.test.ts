import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { catalog } from '../runners/catalog.js'
import { desiredJob } from './desired-job.js'
import { sessionSeconds, withInputKeys } from './runner-credentials.js'
import { installationKeyOf, jobSealKey, newInstallationKey } from '../platform/sealed-input.js'
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

  it("gives credentials for the deadline (300 s) plus ten minutes, and at least STS's 15 minutes", () => {
    expect(sessionSeconds(utilityJob('xls-to-xlsx'), catalog.get('xls-to-xlsx')!)).toBe(900)
    expect(sessionSeconds(utilityJob('zip-files'), catalog.get('zip-files')!)).toBe(1500)
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

describe("the key of a job's sealed input", () => {
  const installation = installationKeyOf(newInstallationKey())
  const edit = catalog.get('edit-pdf')!
  const issue = withInputKeys(async () => ({ ...creds }), { key: async () => installation })

  it('is handed with the credentials of a job whose input holds sealed passwords, and only then', async () => {
    const sealed = { ...utilityJob('edit-pdf'), spec: { ...utilityJob('edit-pdf').spec, inputSealed: true } }
    const given = await issue(sealed, edit)
    expect(given.sealKey).toBe(jobSealKey(installation, sealed.spec.jobId).toString('base64url'))
    const env = desiredJob(sealed, edit, settings, given).spec!.template.spec!.containers[0].env!
    expect(env.find((e) => e.name === 'DUTIL_INPUT_SEAL_KEY')?.value).toBe(given.sealKey)
    const plain = await issue(utilityJob('edit-pdf'), edit)
    expect(plain.sealKey).toBeUndefined()
    expect(envNames(desiredJob(utilityJob('edit-pdf'), edit, settings, plain))).not.toContain('DUTIL_INPUT_SEAL_KEY')
  })

  it('is handed, with the sealed input itself, to the runner of a job whose input rides with it', async () => {
    const base = utilityJob('edit-pdf')
    const riding = { ...base, spec: { ...base.spec, sealedInput: 'v1.bm9uY2U.Y2lwaGVy' } }
    const given = await issue(riding, edit)
    expect(given.sealKey).toBe(jobSealKey(installation, riding.spec.jobId).toString('base64url'))
    const env = desiredJob(riding, edit, settings, given).spec!.template.spec!.containers[0].env!
    expect(env.find((e) => e.name === 'DUTIL_INPUT_SEALED')?.value).toBe('v1.bm9uY2U.Y2lwaGVy')
    expect(env.find((e) => e.name === 'DUTIL_INPUT_SEAL_KEY')?.value).toBe(given.sealKey)
    expect(envNames(desiredJob(base, edit, settings, await issue(base, edit)))).not.toContain('DUTIL_INPUT_SEALED')
  })

  it('refuses the grant when the installation key cannot be read: the job could never open its input', async () => {
    const unreadable = withInputKeys(async () => ({ ...creds }), {
      key: async () => {
        throw new Error('the input sealing key does not exist yet')
      },
    })
    const sealed = { ...utilityJob('edit-pdf'), spec: { ...utilityJob('edit-pdf').spec, inputSealed: true } }
    await expect(unreadable(sealed, edit)).rejects.toThrow(/sealed input cannot be read/)
  })
})
