import { describe, expect, it } from 'vitest'
import { MERGE_PDF_LIMITS } from '../runners/merge-pdf/limits.js'
import { newFileBatch, newFileId } from './ids.js'
import { UTILITIES } from '../runners/catalog.js'
import { newId } from './ids.js'
import {
  coveredByTenantGrant,
  GrantRefused,
  MAX_SESSION_POLICY_CHARS,
  storageGrant,
  tenantGrant,
  type GrantedJob,
} from './storage-grant.js'
import { keyTenant, tenantCode } from './tenants.js'

const job = (storageInputKeys?: string[]): GrantedJob => ({
  jobId: 'job_01M8ABCDEFGHJKMNPQRSTVWXYZ',
  utility: 'merge-pdf',
  createdAt: '2026-11-22T10:00:00.000Z',
  ...(storageInputKeys ? { storageInputKeys } : {}),
})
const source = (i: number, utility = 'unzip-files') =>
  `${utility}/2026-11-21/job_01M8ZZZZZZZZZZZZZZZZZZZ${String(i).padStart(3, '0')}/`

describe('storageGrant', () => {
  it("reads its input and its source jobs' prefixes, writes its own prefix, manifest and progress report, nothing else", () => {
    const policy = storageGrant(job([`${source(1, 'zip-files')}files.zip`]), 'dutil')
    expect(policy.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: ['s3:GetObject'],
        Resource: [
          'arn:aws:s3:::dutil/_jobs/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/input.json',
          `arn:aws:s3:::dutil/${source(1, 'zip-files')}*`,
        ],
      },
      {
        Effect: 'Allow',
        Action: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts', 's3:DeleteObject'],
        Resource: ['arn:aws:s3:::dutil/merge-pdf/2026-11-22/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/*'],
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
    // No listing, no bucket-level action, no wildcard outside a job's own prefix.
    expect(JSON.stringify(policy)).not.toMatch(/ListBucket|s3:\*|:::dutil\/\*|:::dutil"/)
  })

  it('never takes a file name into the grant: names with glob characters or of any length read through their job', () => {
    const keys = [
      `${source(1)}~$budget.pdf`,
      `${source(2)}a*b?.pdf`,
      `${source(3)}${'n'.repeat(200)}.pdf`,
      `${source(1)}x.pdf`,
    ]
    const reads = storageGrant(job(keys), 'dutil').Statement[0].Resource
    expect(reads).toEqual([
      'arn:aws:s3:::dutil/_jobs/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/input.json',
      ...[1, 2, 3].map((i) => `arn:aws:s3:::dutil/${source(i)}*`),
    ])
    expect(reads.join()).not.toMatch(/[$?]|\*b/)
  })

  it(`stays within the ${MAX_SESSION_POLICY_CHARS}-character cap with one long-named file from each of merge-pdf's most source jobs and a 48-character bucket`, () => {
    const keys = Array.from(
      { length: MERGE_PDF_LIMITS.maxStorageSourceJobs },
      (_, i) => `${source(i)}${'x'.repeat(240)}.pdf`,
    )
    const policy = storageGrant(job(keys), 'b'.repeat(48))
    expect(policy.Statement[0].Resource).toHaveLength(1 + MERGE_PDF_LIMITS.maxStorageSourceJobs)
    expect(JSON.stringify(policy).length).toBeLessThanOrEqual(MAX_SESSION_POLICY_CHARS)
  })

  it('refuses a grant storage would refuse for its size, saying so', () => {
    const keys = Array.from({ length: 30 }, (_, i) => `${source(i)}a.pdf`)
    expect(() => storageGrant(job(keys), 'dutil')).toThrow(GrantRefused)
    expect(() => storageGrant(job(keys), 'dutil')).toThrow(
      /30 source jobs and uploads would be \d+ characters, above the 2048/,
    )
  })

  it('refuses a key that is no job output, and a glob in its own keys', () => {
    expect(() => storageGrant(job(['_jobs/job_01M8ZZZZZZZZZZZZZZZZZZZZZZ/input.json']), 'dutil')).toThrow(
      /is not an output file of a job/,
    )
    expect(() => storageGrant(job([source(1)]), 'dutil')).toThrow(GrantRefused)
    expect(() => storageGrant({ ...job(), jobId: 'job_*' }, 'dutil')).toThrow(/glob character/)
  })

  it("grants a request's uploads by their batch's prefix, and an upload made alone by its own", () => {
    const batch = newFileBatch(Date.parse('2026-11-28T10:00:00Z'))
    const ids = Array.from({ length: 100 }, () => batch())
    const alone = newFileId()
    const keys = [...ids.map((id, i) => `uploads/2026-11-28/${id}/page-${i}.pdf`), `uploads/2026-11-28/${alone}/a.pdf`]
    const reads = storageGrant(job(keys), 'dutil').Statement[0].Resource
    expect(reads).toEqual([
      'arn:aws:s3:::dutil/_jobs/job_01M8ABCDEFGHJKMNPQRSTVWXYZ/input.json',
      `arn:aws:s3:::dutil/uploads/2026-11-28/${ids[0].slice(0, 27)}*`,
      `arn:aws:s3:::dutil/uploads/2026-11-28/${alone}/*`,
    ])
    // One file of a batch alone is granted by its own id, not its batch's.
    expect(storageGrant(job([keys[3]]), 'dutil').Statement[0].Resource[1]).toBe(
      `arn:aws:s3:::dutil/uploads/2026-11-28/${ids[3]}/*`,
    )
  })

  it("grants a coded upload by its batch's prefix under its code", () => {
    const batch = newFileBatch(Date.parse('2026-11-28T10:00:00Z'))
    const [a, b] = [batch(), batch()]
    const reads = storageGrant(
      job([`uploads/ABCDEFGH/2026-11-28/${a}/a.pdf`, `uploads/ABCDEFGH/2026-11-28/${b}/b.pdf`]),
      'dutil',
    ).Statement[0].Resource
    expect(reads[1]).toBe(`arn:aws:s3:::dutil/uploads/ABCDEFGH/2026-11-28/${a.slice(0, 27)}*`)
  })
})

describe('tenantGrant', () => {
  const code = tenantCode(keyTenant('key_01M8ABCDEFGHJKMNPQRSTVWXYZ'))
  const utilities = UTILITIES.map((u) => u.slug)
  const at = Date.parse('2026-11-30T10:00:00.000Z')
  const coded = (utility = 'split-pdf', c = code): GrantedJob => ({
    jobId: newId('job', at, c),
    utility,
    createdAt: new Date(at).toISOString(),
  })

  it("reads the tenant's records, outputs and uploads, writes its utility's outputs, within storage's size", () => {
    const policy = tenantGrant({ code, utility: 'split-pdf', utilities }, 'dutil')
    const jobs = `job_??????????${code}????????`
    expect(policy.Statement[0].Resource).toEqual([
      `arn:aws:s3:::dutil/_jobs/${jobs}/input.json`,
      ...utilities.map((u) => `arn:aws:s3:::dutil/${u}/????-??-??/${jobs}/*`),
      `arn:aws:s3:::dutil/uploads/${code}/*`,
    ])
    expect(policy.Statement.slice(1).map((s) => s.Resource)).toEqual([
      [`arn:aws:s3:::dutil/split-pdf/????-??-??/${jobs}/*`],
      [`arn:aws:s3:::dutil/_jobs/${jobs}/result.json`],
      [`arn:aws:s3:::dutil/_jobs/${jobs}/progress.json`],
    ])
    expect(JSON.stringify(policy).length).toBeLessThanOrEqual(MAX_SESSION_POLICY_CHARS)
    // Every job id pattern is as long as a job id: each character is matched at its place.
    expect(jobs).toHaveLength(coded().jobId.length)
    expect(() => tenantGrant({ code: 'ABC*', utility: 'split-pdf', utilities }, 'dutil')).toThrow(GrantRefused)
  })

  it("covers a job of the tenant's code and its coded inputs, nothing else", () => {
    const t = { code, utility: 'split-pdf', utilities }
    const other = tenantCode(keyTenant('key_01M8ZZZZZZZZZZZZZZZZZZZZZZ'))
    const output = (j: GrantedJob) => `${j.utility}/2026-11-30/${j.jobId}/page-1.pdf`
    const upload = (c: string) => `uploads/${c}/2026-11-30/${newFileId(at)}/a.pdf`
    expect(coveredByTenantGrant(coded(), t)).toBe(true)
    expect(coveredByTenantGrant({ ...coded(), storageInputKeys: [output(coded('html-pdf')), upload(code)] }, t)).toBe(
      true,
    )
    // Another tenant's code, an id without it, another utility, inputs of another code or none.
    expect(coveredByTenantGrant(coded('split-pdf', other), t)).toBe(false)
    expect(coveredByTenantGrant({ ...coded(), jobId: newId('job', at) }, t)).toBe(false)
    expect(coveredByTenantGrant(coded('merge-pdf'), t)).toBe(false)
    expect(coveredByTenantGrant({ ...coded(), storageInputKeys: [output(coded('html-pdf', other))] }, t)).toBe(false)
    expect(coveredByTenantGrant({ ...coded(), storageInputKeys: [upload(other)] }, t)).toBe(false)
    expect(
      coveredByTenantGrant({ ...coded(), storageInputKeys: [`uploads/2026-11-30/${newFileId(at)}/a.pdf`] }, t),
    ).toBe(false)
    expect(coveredByTenantGrant({ ...coded(), storageInputKeys: [output({ ...coded(), utility: 'gone' })] }, t)).toBe(
      false,
    )
  })
})
