import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { acceptJob, type AcceptDeps } from './accept-job.js'
import { ApiError } from './api-error.js'
import { installationKeyOf, jobSealKey, newInstallationKey, openInput } from '../platform/sealed-input.js'

const spec = (storageInputKeys: string[]) =>
  ({
    metadata: { name: 'job-01m8abcdefghjkmnpqrstvwxyz' },
    spec: {
      jobId: 'job_01M8ABCDEFGHJKMNPQRSTVWXYZ',
      utility: 'merge-pdf',
      mode: 'async',
      createdAt: '2026-11-22T10:00:00.000Z',
      inputKey: '_jobs/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/input.json',
      storageInputKeys,
    },
  }) as unknown as UtilityJobResource

describe('acceptJob', () => {
  it('refuses with 400 a job whose storage grant storage would refuse, before it stores or records anything', async () => {
    const touched: string[] = []
    const deps = {
      records: { accept: async () => void touched.push('record') },
      jobs: { create: async () => void touched.push('create') },
      bucket: 'b'.repeat(63),
      log: pino({ level: 'silent' }),
    } as unknown as AcceptDeps
    const keys = Array.from(
      { length: 10 },
      (_, i) => `unzip-files/2026-11-21/job_01M8ZZZZZZZZZZZZZZZZZZZ${String(i).padStart(3, '0')}/a.pdf`,
    )
    const refused = await acceptJob(deps, spec(keys), {}).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ApiError)
    expect(refused).toMatchObject({
      code: 'invalid_request',
      details: [
        {
          path: 'input',
          message: expect.stringMatching(/10 source jobs and uploads would be \d+ characters, above the 2048/),
        },
      ],
    })
    expect(touched).toEqual([])
  })

  it("stores an input's passwords sealed with the job's own key, and marks the job so its runner gets that key", async () => {
    const installation = installationKeyOf(newInstallationKey())
    const stored: Record<string, Buffer> = {}
    let recorded: UtilityJobResource | undefined
    let created: UtilityJobResource | undefined
    const deps = {
      records: {
        accept: async (uj: UtilityJobResource, beforeCommit: () => Promise<void>) => {
          recorded = uj
          await beforeCommit()
          return { kind: 'accepted' }
        },
      },
      jobs: { create: async (uj: UtilityJobResource) => (created = uj) },
      storage: { putObject: async (_b: string, key: string, body: Buffer) => void (stored[key] = body) },
      bucket: 'dutil',
      sealing: { key: async () => installation },
      metrics: { jobsCreated: { inc: () => undefined } },
      log: pino({ level: 'silent' }),
    } as unknown as AcceptDeps
    const uj = spec([])
    uj.spec.utility = 'edit-pdf'
    const input = { url: 'https://example.com/a.pdf', password: 'open sesame', encrypt: { userPassword: 'x y' } }
    await acceptJob(deps, uj, input)
    const record = JSON.parse(stored[uj.spec.inputKey].toString('utf8')) as unknown
    expect(JSON.stringify(record)).not.toMatch(/open sesame|x y/)
    // What the operator hands the runner (withInputKeys) opens it; the installation's key does not.
    expect(openInput(record, jobSealKey(installation, uj.spec.jobId), uj.spec.jobId)).toEqual(input)
    expect(() => openInput(record, installation, uj.spec.jobId)).toThrow()
    expect([recorded?.spec.inputSealed, created?.spec.inputSealed]).toEqual([true, true])
    // Without a password, the input is stored as it came and the job is not marked.
    const plain = spec([])
    plain.spec.utility = 'edit-pdf'
    await acceptJob(deps, plain, { url: 'https://example.com/a.pdf', flatten: true })
    expect(JSON.parse(stored[plain.spec.inputKey].toString('utf8'))).toEqual({
      url: 'https://example.com/a.pdf',
      flatten: true,
    })
    expect(created?.spec.inputSealed).toBeUndefined()
    // Nor does it depend on the key: one that cannot be read refuses only inputs with a password.
    const keyless = {
      ...deps,
      sealing: {
        key: async () => {
          throw new Error('the input sealing key does not exist yet')
        },
      },
    } as AcceptDeps
    await acceptJob(keyless, plain, { url: 'https://example.com/a.pdf', flatten: true })
    await expect(acceptJob(keyless, uj, input)).rejects.toMatchObject({ code: 'internal' })
  })
})
