import { Readable } from 'node:stream'
import type { Client } from 'minio'
import { describe, expect, it } from 'vitest'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { resultObjectKey } from '../contract/runner-protocol.js'
import { readResultManifest, RESULT_READ_RETRY_MS } from './result-manifest.js'

const jobId = 'job_01JDTQ5K0000000000000000AB'
const uj = {
  apiVersion: 'dutil.io/v1alpha1',
  kind: 'UtilityJob',
  metadata: { name: 'job-01jdtq5k0000000000000000ab' },
  spec: {
    jobId,
    utility: 'split-pdf',
    mode: 'async',
    apiKeyId: 'key_A',
    apiKeyName: 'a',
    createdAt: '2026-11-20T10:00:00.000Z',
    inputKey: 'x',
    metadata: null,
  },
} as UtilityJobResource
const manifest = {
  files: [{ key: `split-pdf/2026-11-20/${jobId}/page-1.pdf`, name: 'page-1.pdf', size: 3, contentType: null }],
  extras: { pageCount: 1 },
  startedAt: '2026-11-20T10:00:01.000Z',
  upstreamMs: 10,
  storageMs: 5,
}

/** Storage holding one object (the text given) under the job's manifest key, or failing as told. */
const storage = (answer: string | { code: string; message: string }) =>
  ({
    getObject: async (_bucket: string, key: string) => {
      if (typeof answer !== 'string') throw Object.assign(new Error(answer.message), { code: answer.code })
      expect(key).toBe(resultObjectKey(jobId))
      return Readable.from([Buffer.from(answer)])
    },
  }) as unknown as Client

const finishedAt = Date.parse('2026-11-20T10:00:02.000Z')

describe('readResultManifest', () => {
  it('accepts a manifest within its bounds that names only files of the job', async () => {
    const read = await readResultManifest(storage(JSON.stringify(manifest)), 'b', uj, finishedAt, finishedAt + 10)
    expect(read).toEqual({ outcome: 'accepted', result: manifest })
  })

  it('refuses one that names another job’s file, and one that is not JSON', async () => {
    const forged = { ...manifest, files: [{ ...manifest.files[0], key: 'split-pdf/2026-11-20/job_OTHER/p.pdf' }] }
    const refused = await readResultManifest(storage(JSON.stringify(forged)), 'b', uj, finishedAt, finishedAt)
    expect(refused.outcome).toBe('refused')
    const garbage = await readResultManifest(storage('{"files": ['), 'b', uj, finishedAt, finishedAt)
    expect(garbage).toMatchObject({ outcome: 'over-bound', err: { bound: 'syntax' } })
  })

  it('retries while storage does not answer, for a while after the runner finished, then gives up', async () => {
    const down = storage({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' })
    expect(await readResultManifest(down, 'b', uj, finishedAt, finishedAt + 1000)).toMatchObject({
      outcome: 'retry',
      err: 'connect ECONNREFUSED',
    })
    expect(await readResultManifest(down, 'b', uj, finishedAt, finishedAt + RESULT_READ_RETRY_MS)).toMatchObject({
      outcome: 'unreadable',
    })
  })

  it('does not wait for a manifest that is not there', async () => {
    const missing = storage({ code: 'NoSuchKey', message: 'The specified key does not exist.' })
    expect((await readResultManifest(missing, 'b', uj, finishedAt, finishedAt + 10)).outcome).toBe('unreadable')
  })
})
