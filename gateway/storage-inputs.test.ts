import { describe, expect, it } from 'vitest'
import { ulid } from 'ulid'
import { parseS3Url } from '../contract/storage-keys.js'
import { outputKeyOwner, storageUrlsOf } from '../contract/storage-inputs.js'
import type { JobRecord } from '../contract/job-view.js'
import { ApiError } from './api-error.js'
import { assertStorageInputsReadable } from './storage-inputs.js'

const at = Date.parse('2026-11-20T10:00:00.000Z')
const jobA = `job_${ulid(at)}`
const page = `split-pdf/2026-11-20/${jobA}/page-002.pdf`
const record: JobRecord = {
  spec: {
    jobId: jobA,
    utility: 'split-pdf',
    mode: 'async',
    apiKeyId: 'key_A',
    apiKeyName: 'a',
    createdAt: new Date(at).toISOString(),
    inputKey: `_jobs/${jobA}/input.json`,
    metadata: null,
  },
  status: {
    state: 'succeeded',
    startedAt: null,
    finishedAt: null,
    timings: { queueMs: 0, upstreamMs: 0, storageMs: 0, totalMs: 0 },
    result: { files: [{ key: page, name: 'page-002.pdf', size: 1, contentType: 'application/pdf' }], extras: {} },
    error: null,
  },
}
const check = (url: string, caller = 'key_A') =>
  assertStorageInputsReadable(
    { url },
    {
      bucket: 'dutil',
      find: async (id) => (id === jobA ? record : undefined),
      owns: (j) => j.spec.apiKeyId === caller,
    },
  )

describe('parseS3Url', () => {
  it('decodes the key once and refuses keys that could name something else', () => {
    expect(parseS3Url('s3://dutil/a/my%20file.pdf')).toEqual({ bucket: 'dutil', key: 'a/my file.pdf' })
    for (const bad of [
      's3://dutil/a/../b',
      's3://dutil/a/%2E%2E/b',
      's3://dutil//a',
      's3://dutil/a/./b',
      's3://dutil/a%5Cb',
      's3://dutil/a%00b',
      's3://dutil/%E0%A4%A',
      's3://Dutil/a',
      's3://dutil',
      's3://dutil/a?x=1',
    ]) {
      expect(parseS3Url(bad), bad).toBeNull()
    }
  })
})

describe('outputKeyOwner and storageUrlsOf', () => {
  it('know an output key and find every s3:// URL of an input', () => {
    expect(outputKeyOwner(page)).toEqual({ utility: 'split-pdf', day: '2026-11-20', jobId: jobA })
    expect(outputKeyOwner(`_jobs/${jobA}/input.json`)).toBeNull()
    expect(outputKeyOwner('usage/daily/2026-11-20.json')).toBeNull()
    expect(storageUrlsOf({ url: 's3://dutil/x', files: [{ url: 'https://a' }, { url: 's3://dutil/y' }] })).toEqual([
      { path: 'input.url', url: 's3://dutil/x' },
      { path: 'input.files.1.url', url: 's3://dutil/y' },
    ])
    expect(storageUrlsOf({ html: '<p>', assets: [{ url: 's3://dutil/a.css' }, { url: 's3://dutil/b.png' }] })).toEqual([
      { path: 'input.assets.0.url', url: 's3://dutil/a.css' },
      { path: 'input.assets.1.url', url: 's3://dutil/b.png' },
    ])
  })
})

describe('assertStorageInputsReadable', () => {
  it("lets a key read its own job outputs, and names the object keys its runner's credentials may read", async () => {
    await expect(check(`s3://dutil/${page}`)).resolves.toEqual([page])
    await expect(check(`s3://dutil/${page.replace('page-002', 'page%2D002')}`)).resolves.toEqual([page])
  })

  it('answers 404 for another key, internal objects, other buckets and every spelling trick', async () => {
    const refused = [
      [`s3://dutil/${page}`, 'key_B'],
      [`s3://dutil/_jobs/${jobA}/input.json`, 'key_A'],
      [`s3://dutil/_jobs/${jobA}/result.json`, 'key_A'],
      ['s3://dutil/usage/daily/2026-11-20.json', 'key_A'],
      [`s3://other-bucket/${page}`, 'key_A'],
      [`s3://dutil.s3.amazonaws.com/${page}`, 'key_A'],
      [`s3://dutil/${page.replace('split-pdf', 'SPLIT-PDF')}`, 'key_A'],
      [`s3://dutil/${page.replace('split-pdf', 'html-pdf')}`, 'key_A'],
      [`s3://dutil/${page.replace('2026-11-20', '2026-11-21')}`, 'key_A'],
      [`s3://dutil/${page.replace('page-002', 'page-003')}`, 'key_A'],
      [`s3://dutil/split-pdf/2026-11-20/${jobA}/../../../_jobs/${jobA}/input.json`, 'key_A'],
      [`s3://dutil/split-pdf/2026-11-20/${jobA}%2F..%2F..%2F..%2F_jobs%2F${jobA}%2Finput.json`, 'key_A'],
    ] as const
    for (const [url, caller] of refused) {
      const err = await check(url, caller).catch((e) => e)
      expect(err, url).toBeInstanceOf(ApiError)
      expect((err as ApiError).code, url).toBe('not_found')
    }
  })
})
