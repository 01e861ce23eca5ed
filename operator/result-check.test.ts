import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import type { RunnerResult } from '../contract/runner-protocol.js'
import { resultProblem } from './result-check.js'

const jobId = 'job_01JDTQ5K0000000000000000AB'
const uj = {
  apiVersion: 'dutil.io/v1alpha1',
  kind: 'UtilityJob',
  metadata: { name: 'job-01jdtq5k0000000000000000ab' },
  spec: {
    jobId,
    utility: 'unzip-files',
    mode: 'async',
    apiKeyId: 'key_A',
    apiKeyName: 'a',
    createdAt: '2026-11-20T10:00:00.000Z',
    inputKey: 'x',
    metadata: null,
  },
} as UtilityJobResource
const prefix = `unzip-files/2026-11-20/${jobId}/`
const ok = (over: Partial<RunnerResult> = {}): RunnerResult => ({
  files: [
    { key: `${prefix}a.txt`, name: 'a.txt', size: 3, contentType: 'text/plain', path: 'a.txt' },
    { key: `${prefix}docs/b.pdf`, name: 'b.pdf', size: null, contentType: null, path: 'docs/b.pdf' },
  ],
  extras: { fileCount: 2 },
  startedAt: '2026-11-20T10:00:01.000Z',
  upstreamMs: 10,
  storageMs: 5,
  ...over,
})

describe('resultProblem', () => {
  it('accepts what the runners write: files under the job prefix, nested paths, counts and extras', () => {
    expect(resultProblem(uj, ok())).toBeNull()
    expect(resultProblem(uj, ok({ files: [], extras: {} }))).toBeNull()
  })

  it('refuses a forged manifest that points anywhere else', () => {
    const forged = (key: string) => resultProblem(uj, ok({ files: [{ key, name: 'x', size: 1, contentType: null }] }))
    for (const key of [
      'split-pdf/2026-11-20/job_01JDTQ5K0000000000000000ZZ/page-001.pdf', // another job's output
      `_jobs/${jobId}/input.json`, // the service's own record
      'usage/daily/2026-11-20.json',
      `${prefix}../../../_jobs/${jobId}/input.json`,
      `${prefix}a//b`,
      `${prefix}./a`,
      `unzip-files/2026-11-21/${jobId}/a.txt`, // another day
      `${prefix}a\\..\\b`,
    ]) {
      expect(forged(key), key).not.toBeNull()
    }
  })

  it('refuses unbounded or malformed content', () => {
    const many = Array.from({ length: 2001 }, (_, i) => ({
      key: `${prefix}f${i}`,
      name: `f${i}`,
      size: 1,
      contentType: null,
    }))
    expect(resultProblem(uj, ok({ files: many }))).toMatch(/more than 2000/)
    expect(resultProblem(uj, ok({ files: [{ key: `${prefix}a`, name: 'a', size: -1, contentType: null }] }))).toMatch(
      /size/,
    )
    expect(resultProblem(uj, ok({ files: [{ key: `${prefix}a`, name: '', size: 1, contentType: null }] }))).toMatch(
      /name/,
    )
    expect(resultProblem(uj, ok({ files: [ok().files[0], ok().files[0]] }))).toMatch(/twice/)
    expect(resultProblem(uj, ok({ extras: { note: 'x'.repeat(2000) } }))).toMatch(/extras/)
    expect(resultProblem(uj, ok({ upstreamMs: -5 }))).toMatch(/upstreamMs/)
    expect(resultProblem(uj, { files: 'all of them' })).toMatch(/files/)
    expect(resultProblem(uj, null)).not.toBeNull()
  })
})
