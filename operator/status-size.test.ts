import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import type { StoredFile } from '../contract/runner-protocol.js'
import { SPLIT_PDF_LIMITS } from '../runners/split-pdf/utility.js'
import { UNZIP_LIMITS } from '../runners/unzip-files/limits.js'
import { boundedStatus } from '../contract/status-budget.js'
import { succeededStatus } from './next-status.js'
import { RESULT_LIMITS } from './result-check.js'

/**
 * A UtilityJob must stay well under etcd's 1.5 MiB object limit, or its final status write fails
 * and the job never finishes. The largest results the limits allow (every unzip entry with the
 * longest multi-byte path: ~1.7 MB in full) are written with the files that fit the status
 * budget; the rest live in the job record.
 */
const STATUS_BUDGET_BYTES = 1024 * 1024
const created = Date.parse('2026-11-23T10:00:00.000Z')
const uj = (utility: string): UtilityJobResource => ({
  apiVersion: 'dutil.io/v1alpha1',
  kind: 'UtilityJob',
  metadata: { name: 'job-01m84rtd3gbarnm0v01072jp40' },
  spec: {
    jobId: 'job_01M84RTD3GBARNM0V01072JP40',
    utility,
    mode: 'async',
    apiKeyId: 'key_01M84RTD3GBARNM0V01072JP40',
    apiKeyName: 'k'.repeat(100),
    createdAt: new Date(created).toISOString(),
    inputKey: 'i',
    metadata: null,
  },
})
const written = (utility: string, files: StoredFile[]) =>
  boundedStatus(
    succeededStatus(
      uj(utility),
      { files, extras: { fileCount: files.length }, startedAt: '', upstreamMs: 1, storageMs: 1 },
      created,
      created + 1000,
    ),
  )
const size = (utility: string, files: StoredFile[]) => Buffer.byteLength(JSON.stringify(written(utility, files)))

describe('status size', () => {
  it('keeps the largest unzip-files result (every entry, longest paths, in multi-byte characters) under the budget', () => {
    const prefix = 'unzip-files/2026-11-23/job_01M84RTD3GBARNM0V01072JP40/'
    const files = Array.from({ length: UNZIP_LIMITS.maxEntries }, (_, i): StoredFile => {
      const path = `${String(i).padStart(4, '0')}/${'é'.repeat(UNZIP_LIMITS.maxPathLength - 5)}`.slice(
        0,
        UNZIP_LIMITS.maxPathLength,
      )
      return {
        key: prefix + path,
        name: path.split('/').pop()!,
        size: 2 ** 40,
        contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        path,
      }
    })
    expect(Buffer.byteLength(JSON.stringify(files))).toBeGreaterThan(1.5 * 1024 * 1024)
    expect(size('unzip-files', files)).toBeLessThan(STATUS_BUDGET_BYTES)
    expect(written('unzip-files', files).result!.filesOmitted).toBeGreaterThan(0)
  })

  it('keeps the largest split-pdf result under the budget', () => {
    const files = Array.from({ length: SPLIT_PDF_LIMITS.maxPages }, (_, i): StoredFile => ({
      key: `split-pdf/2026-11-23/job_01M84RTD3GBARNM0V01072JP40/page-${String(i + 1).padStart(3, '0')}.pdf`,
      name: `page-${i + 1}.pdf`,
      size: 2 ** 30,
      contentType: 'application/pdf',
      pageNumber: i + 1,
    }))
    expect(size('split-pdf', files)).toBeLessThan(STATUS_BUDGET_BYTES)
  })

  it('accepts in the manifest check no more files than any utility may produce, and a manifest at that count fits', () => {
    expect(RESULT_LIMITS.maxFiles).toBeGreaterThanOrEqual(Math.max(UNZIP_LIMITS.maxEntries, SPLIT_PDF_LIMITS.maxPages))
    const files = Array.from({ length: RESULT_LIMITS.maxFiles }, (_, i): StoredFile => ({
      key: `zip-files/2026-11-23/job_01M84RTD3GBARNM0V01072JP40/${'n'.repeat(200)}${i}`,
      name: 'n'.repeat(200),
      size: 1,
      contentType: 'application/zip',
    }))
    expect(size('zip-files', files)).toBeLessThan(STATUS_BUDGET_BYTES)
  })
})
