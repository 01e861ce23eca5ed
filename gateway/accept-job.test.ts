import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { acceptJob, type AcceptDeps } from './accept-job.js'
import { ApiError } from './api-error.js'

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
})
