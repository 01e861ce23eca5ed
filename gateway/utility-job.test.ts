import { describe, expect, it } from 'vitest'
import { JOB_RECORD_FINALIZER, LABELS, MANAGED_BY } from '../contract/api-group.js'
import { newJobSpec, utilityJobResource } from './utility-job.js'

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0, 5)

describe('a new job (the API path and the playground alike)', () => {
  it('an API key job: the key on the spec and on the labels, every optional field only when given', () => {
    const spec = newJobSpec({
      jobId: 'job_01JZ0000000000000000000000',
      now: NOW,
      utility: 'split-pdf',
      mode: 'sync',
      owner: { kind: 'key', id: 'key_1', name: 'ci', owner: 'owner:ana@example.com' },
      request: { input: { url: 'https://example.com/a.pdf' }, metadata: { ref: 7 } },
      storageInputKeys: [],
      idempotencyKeyHash: 'h',
      deadlineSeconds: Number.NaN,
    })
    expect(spec).toEqual({
      jobId: 'job_01JZ0000000000000000000000',
      utility: 'split-pdf',
      mode: 'sync',
      apiKeyId: 'key_1',
      apiKeyName: 'ci',
      owner: 'owner:ana@example.com',
      createdAt: '2026-11-24T12:00:00.005Z',
      inputKey: expect.stringContaining('job_01JZ0000000000000000000000'),
      metadata: { ref: 7 },
      idempotencyKeyHash: 'h',
    })
    const uj = utilityJobResource(spec, 'key-object')
    expect(uj.metadata.labels).toEqual({
      [LABELS.managedBy]: MANAGED_BY,
      [LABELS.apiKey]: 'key-object',
      [LABELS.utility]: 'split-pdf',
    })
    expect(uj.metadata.finalizers).toEqual([JOB_RECORD_FINALIZER])
    expect(uj.metadata.name).toMatch(/^job-01jz0+$/)
    expect(uj.spec).toBe(spec)
  })

  it('a playground job: no key, its person, a callback and storage inputs', () => {
    const spec = newJobSpec({
      jobId: 'job_01JZ0000000000000000000001',
      now: NOW,
      utility: 'zip-files',
      mode: 'async',
      owner: { kind: 'playground', email: 'ana@example.com' },
      request: { input: { files: [] }, callbackUrl: 'https://hooks.example.com/x' },
      storageInputKeys: ['split-pdf/2026-11-24/job_x/page-1.pdf'],
      deadlineSeconds: 5,
    })
    expect(spec).toMatchObject({
      apiKeyId: '',
      apiKeyName: '',
      source: 'playground',
      userEmail: 'ana@example.com',
      owner: 'owner:ana@example.com',
      metadata: null,
      callbackUrl: 'https://hooks.example.com/x',
      storageInputKeys: ['split-pdf/2026-11-24/job_x/page-1.pdf'],
      deadlineSeconds: 5,
    })
    expect(spec.idempotencyKeyHash).toBeUndefined()
    expect(utilityJobResource(spec).metadata.labels).toEqual({
      [LABELS.managedBy]: MANAGED_BY,
      [LABELS.utility]: 'zip-files',
    })
  })
})
