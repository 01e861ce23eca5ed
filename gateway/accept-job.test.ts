import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { acceptJob, type AcceptDeps } from './accept-job.js'
import { ApiError } from './api-error.js'
import { installationKeyOf, jobSealKey, newInstallationKey, openDocument, openInput } from '../platform/sealed-input.js'
import { INLINE_INPUT_MAX_BYTES } from '../contract/runner-protocol.js'

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

  const sealingDeps = () => {
    const installation = installationKeyOf(newInstallationKey())
    const stored: Record<string, Buffer> = {}
    const seen: { recorded?: UtilityJobResource; created?: UtilityJobResource } = {}
    const deps = {
      records: {
        accept: async (uj: UtilityJobResource, beforeCommit: () => Promise<void>) => {
          seen.recorded = uj
          await beforeCommit()
          return { kind: 'accepted' }
        },
      },
      jobs: { create: async (uj: UtilityJobResource) => (seen.created = uj) },
      storage: { putObject: async (_b: string, key: string, body: Buffer) => void (stored[key] = body) },
      bucket: 'dutil',
      sealing: { key: async () => installation, operatorTakesSealedInputs: async () => true },
      metrics: { jobsCreated: { inc: () => undefined } },
      log: pino({ level: 'silent' }),
    } as unknown as AcceptDeps
    return { installation, stored, seen, deps }
  }
  const editPdfJob = () => {
    const uj = spec([])
    uj.spec.utility = 'edit-pdf'
    return uj
  }

  it('carries a small input sealed with the job (its row and its UtilityJob), storing nothing', async () => {
    const { installation, stored, seen, deps } = sealingDeps()
    const uj = editPdfJob()
    const input = {
      url: 'https://example.com/a.pdf?token=s3cr3t',
      password: 'open sesame',
      encrypt: { userPassword: 'x y' },
    }
    await acceptJob(deps, uj, input)
    expect(stored).toEqual({})
    const sealed = seen.created?.spec.sealedInput
    expect(seen.recorded?.spec.sealedInput).toBe(sealed)
    expect(sealed).toMatch(/^v1\./)
    expect(JSON.stringify(seen.created)).not.toMatch(/s3cr3t|open sesame|x y/)
    // What the operator hands the runner (withInputKeys) opens it, passwords and all; the installation's key does not.
    const key = jobSealKey(installation, uj.spec.jobId)
    expect(openInput(openDocument(sealed!, key, uj.spec.jobId), key, uj.spec.jobId)).toEqual(input)
    expect(() => openDocument(sealed!, installation, uj.spec.jobId)).toThrow()
    expect(seen.created?.spec.inputSealed).toBeUndefined()
  })

  it('stores a small input too while the operator has not said it runs jobs whose input rides with them (mid-upgrade)', async () => {
    const { installation, stored, seen, deps } = sealingDeps()
    const earlier = {
      ...deps,
      sealing: { ...deps.sealing, operatorTakesSealedInputs: async () => false },
    } as AcceptDeps
    const uj = editPdfJob()
    const input = { url: 'https://example.com/a.pdf', password: 'open sesame' }
    await acceptJob(earlier, uj, input)
    expect(seen.created?.spec.sealedInput).toBeUndefined()
    expect(seen.created?.spec.inputSealed).toBe(true)
    const record = JSON.parse(stored[uj.spec.inputKey]!.toString('utf8')) as unknown
    expect(JSON.stringify(record)).not.toContain('open sesame')
    expect(openInput(record, jobSealKey(installation, uj.spec.jobId), uj.spec.jobId)).toEqual(input)
  })

  it("stores a large input with its passwords sealed with the job's own key, and marks the job so its runner gets that key", async () => {
    const { installation, stored, seen, deps } = sealingDeps()
    const uj = editPdfJob()
    const input = {
      url: `https://example.com/a.pdf?pad=${'p'.repeat(INLINE_INPUT_MAX_BYTES)}`,
      password: 'open sesame',
      encrypt: { userPassword: 'x y' },
    }
    await acceptJob(deps, uj, input)
    const record = JSON.parse(stored[uj.spec.inputKey]!.toString('utf8')) as unknown
    expect(JSON.stringify(record)).not.toMatch(/open sesame|x y/)
    expect(openInput(record, jobSealKey(installation, uj.spec.jobId), uj.spec.jobId)).toEqual(input)
    expect(() => openInput(record, installation, uj.spec.jobId)).toThrow()
    expect([seen.recorded?.spec.inputSealed, seen.created?.spec.inputSealed]).toEqual([true, true])
    expect(seen.created?.spec.sealedInput).toBeUndefined()
    // Without a password, a large input is stored as it came and the job is not marked.
    const plain = editPdfJob()
    const large = { url: input.url, flatten: true }
    await acceptJob(deps, plain, large)
    expect(JSON.parse(stored[plain.spec.inputKey]!.toString('utf8'))).toEqual(large)
    expect(seen.created?.spec.inputSealed).toBeUndefined()
    // A sealing key that cannot be read refuses what needs it (every small input, a password), asking for a retry.
    const keyless = {
      ...deps,
      sealing: {
        key: async () => {
          throw new Error('the input sealing key does not exist yet')
        },
        operatorTakesSealedInputs: async () => true,
      },
    } as AcceptDeps
    await acceptJob(keyless, editPdfJob(), large)
    await expect(acceptJob(keyless, editPdfJob(), input)).rejects.toMatchObject({ code: 'internal' })
    await expect(acceptJob(keyless, editPdfJob(), { url: 'https://example.com/a.pdf' })).rejects.toMatchObject({
      code: 'internal',
      headers: { 'Retry-After': '2' },
    })
  })
})
