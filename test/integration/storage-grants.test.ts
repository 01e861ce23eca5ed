import { AssumeRoleProvider } from 'minio/dist/esm/AssumeRoleProvider.mjs'
import { describe, expect, inject, it } from 'vitest'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { newId, objectNameOf } from '../../contract/ids.js'
import { GrantRefused } from '../../contract/storage-grant.js'
import { isoMs } from '../../contract/time.js'
import { catalog } from '../../runners/catalog.js'
import {
  stsAssumeRole,
  stsCredentialIssuer,
  stsRefusalCode,
  tenantCredentialIssuer,
} from '../../operator/runner-credentials.js'
import { newFileId } from '../../contract/ids.js'
import { outputKey, uploadKey } from '../../contract/storage-keys.js'
import { inputObjectKey, resultObjectKey } from '../../contract/runner-protocol.js'
import { keyTenant, tenantCode } from '../../contract/tenants.js'
import { UTILITIES } from '../../runners/catalog.js'
import { ObjectStoreError, s3ObjectStore } from '../../runners/common/object-store.js'
import { putObject } from './helpers/storage.js'
import { until } from '../platform/wait-for.js'
import { makePdf } from '../support/pdfs.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'
import { api } from './helpers/api.js'
import { createJobDirectly, readJob } from './helpers/direct-jobs.js'
import { jobInputs } from './helpers/job-inputs.js'
import { createKey, kubeConfig } from './helpers/keys.js'
import { BatchV1Api } from '@kubernetes/client-node'
import { apiStatus } from '../../platform/kube.js'

/**
 * A runner's storage grant (contract/storage-grant.ts) is decided when the job is accepted and
 * never holds a run slot it cannot use: attacks that parked jobs in `admitted` for good, each
 * performed as a tenant would against the real platform.
 */
const inputs = jobInputs()
const { files } = inputs
const s3Url = (key: string) => `s3://${inject('storage').bucket}/${key.split('/').map(encodeURIComponent).join('/')}`

/** An unzip job's stored outputs: `names` inside one archive, each a one-page PDF. */
async function unzipped(key: string, names: string[]): Promise<Array<{ key: string; name: string }>> {
  const pdf = await makePdf(1)
  const zip = writeZip(names.map((n) => fileEntry(n, pdf)))
  const res = await api('POST', '/v1/utilities/unzip-files', {
    key,
    body: { input: { url: files.add(`${names.length}-${Date.now()}.zip`, zip, 'application/zip') } },
  })
  expect(res.status).toBe(200)
  return res.body.result.files
}

describe('s3:// inputs whose names would widen or outgrow a grant', () => {
  it('runs split-pdf on outputs named with glob characters (~$budget.pdf, a*b?.pdf) of an earlier job', async () => {
    const outputs = await unzipped(inputs.key, ['~$budget.pdf', 'a*b?.pdf'])
    for (const out of outputs) {
      const res = await api('POST', '/v1/utilities/split-pdf', {
        key: inputs.key,
        body: { input: { url: s3Url(out.key) } },
      })
      expect(res.body).toMatchObject({ status: 'succeeded', result: { pageCount: 1 } })
    }
  })

  it('merges one 102-character-named output from each of ten earlier jobs', async () => {
    const outputs = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        unzipped(inputs.key, [`${String(i).padStart(2, '0')}${'n'.repeat(96)}.pdf`]),
      ),
    )
    expect(outputs.flat()[0].name).toHaveLength(102)
    const res = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: { input: { files: outputs.flat().map((o) => ({ url: s3Url(o.key) })) } },
    })
    expect(res.body).toMatchObject({ status: 'succeeded', result: { pageCount: 10 } })
  })
})

describe('a grant storage refuses', () => {
  it('fails the job as storage_error at once, so jobs that cannot start never hold the run slots of others', async () => {
    const { id: keyId } = await createKey({ name: 'grant-refused' })
    // A UtilityJob made around the gateway, naming more than its utility's slots can run at once.
    const slots = catalog.get('split-pdf')!.runner.concurrency
    const parked = await Promise.all(
      Array.from({ length: slots + 1 }, () =>
        createJobDirectly({
          keyId,
          mode: 'async',
          inputUrl: files.add('x.pdf', Buffer.from('%PDF-1.4')),
          storageInputKeys: ['_jobs/*/input.json'],
        }),
      ),
    )
    for (const uj of parked) {
      const failed = await until(`${uj.spec.jobId} failed`, async () => {
        const s = (await readJob(uj.metadata.name)).status
        return s?.state === 'failed' ? s : undefined
      })
      expect(failed.error).toMatchObject({
        code: 'storage_error',
        message:
          'This job\'s storage access cannot be granted: "_jobs/*/input.json" is not an output file of a job or an upload.',
      })
      // No batch Job was ever made for it.
      const batch = kubeConfig().makeApiClient(BatchV1Api)
      expect(
        apiStatus(await batch.readNamespacedJob({ name: uj.metadata.name, namespace: 'dutil' }).catch((e) => e)),
      ).toBe(404)
    }
    // Every slot is free: a job of the same utility runs at once.
    const after = await api('POST', '/v1/utilities/split-pdf', {
      key: inputs.key,
      body: { input: { url: files.add('after.pdf', await makePdf(2)) } },
    })
    expect(after.body).toMatchObject({ status: 'succeeded', result: { pageCount: 2 } })
  })

  it("tells storage's refusal of a grant from storage being away, as MinIO answers them", async () => {
    const storage = inject('storage')
    const oversized = new AssumeRoleProvider({
      stsEndpoint: storage.endpoint,
      accessKey: storage.accessKey,
      secretKey: storage.secretKey,
      region: storage.region,
      durationSeconds: 900,
      policy: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Action: ['s3:GetObject'],
            Resource: [`arn:aws:s3:::${storage.bucket}/${'x'.repeat(2100)}`],
          },
        ],
      }),
    })
    const refusal = await oversized.getCredentials().then(
      () => null,
      (err: unknown) => err,
    )
    expect(stsRefusalCode(refusal)).toBeTruthy()

    const jobId = newId('job')
    const job = {
      metadata: { name: objectNameOf(jobId) },
      spec: { jobId, utility: 'split-pdf', mode: 'async', createdAt: isoMs(Date.now()) },
    } as UtilityJobResource
    const wrongSecret = stsCredentialIssuer(
      { ...storage, endpoint: storage.endpoint, secretKey: 'not-the-secret' },
      storage.bucket,
    )
    await expect(wrongSecret(job, catalog.get('split-pdf')!)).rejects.toBeInstanceOf(GrantRefused)
    const away = stsCredentialIssuer({ ...storage, endpoint: 'http://127.0.0.1:1' }, storage.bucket)
    const unreachable = await away(job, catalog.get('split-pdf')!).then(
      () => null,
      (err: unknown) => err,
    )
    expect(unreachable).toBeInstanceOf(Error)
    expect(unreachable).not.toBeInstanceOf(GrantRefused)
  })
})

describe("a pool pod's grant: its tenant's objects, and nobody else's", () => {
  it('reads and writes what the patterns name, as MinIO reads them, and is asked of storage once', async () => {
    const storage = inject('storage')
    const now = Date.now()
    const [a, b] = ['key_01M8TENANTAAAAAAAAAAAAAAAA', 'key_01M8TENANTBBBBBBBBBBBBBBBB'].map((id) =>
      tenantCode(keyTenant(id)),
    )
    const jobOf = (code: string) => newId('job', now, code)
    const [jobA, olderA, jobB] = [jobOf(a), jobOf(a), jobOf(b)]
    const pdf = Buffer.from('%PDF-1.4 grant')
    // What each tenant holds: a job's input record and output, an upload; and what another
    // tenant could shape to look like the first's (a zip entry's path inside its own job).
    const held = {
      ownInput: inputObjectKey(jobA),
      ownOutput: outputKey('html-pdf', now, olderA, 'a.pdf'),
      ownUpload: uploadKey(a, now, newFileId(now), 'a.pdf'),
      otherInput: inputObjectKey(jobB),
      otherOutput: outputKey('html-pdf', now, jobB, 'b.pdf'),
      otherUpload: uploadKey(b, now, newFileId(now), 'b.pdf'),
      otherShaped: outputKey('unzip-files', now, jobB, `x/${outputKey('html-pdf', now, olderA, 'a.pdf')}`),
      uncodedUpload: `uploads/${new Date(now).toISOString().slice(0, 10)}/${newFileId(now)}/c.pdf`,
    }
    for (const key of Object.values(held)) await putObject(key, pdf, 'application/pdf')

    const asked: string[] = []
    const issue = tenantCredentialIssuer({
      assume: stsAssumeRole({ ...storage }),
      bucket: storage.bucket,
      utilities: UTILITIES.map((u) => u.slug),
      perJob: () => Promise.reject(new Error('a grant of its own was asked for')),
      counted: (scope, source) => asked.push(`${scope}/${source}`),
    })
    const job = (jobId: string) =>
      ({
        metadata: { name: objectNameOf(jobId) },
        spec: {
          jobId,
          utility: 'split-pdf',
          mode: 'sync',
          apiKeyId: 'key_01M8TENANTAAAAAAAAAAAAAAAA',
          createdAt: isoMs(now),
          storageInputKeys: [held.ownOutput, held.ownUpload],
        },
      }) as unknown as UtilityJobResource
    const credentials = await issue(job(jobA), catalog.get('split-pdf')!)
    expect(await issue(job(jobOf(a)), catalog.get('split-pdf')!)).toEqual(credentials)
    expect(asked).toEqual(['tenant/issued', 'tenant/reused'])

    // The runner's own storage client, with the pod's credentials.
    const runner = s3ObjectStore({ ...storage, ...credentials })
    const reads = async (key: string) =>
      runner.getObject(key).then(
        async (o) => {
          for await (const _ of o.body);
          return 'read'
        },
        (err: unknown) => (err instanceof ObjectStoreError ? err.code : String(err)),
      )
    const writes = (key: string) =>
      runner.putObject(key, pdf, 'application/pdf').then(
        () => 'written',
        (err: unknown) => (err instanceof ObjectStoreError ? err.code : String(err)),
      )
    expect({
      ownInput: await reads(held.ownInput),
      ownOutput: await reads(held.ownOutput),
      ownUpload: await reads(held.ownUpload),
      otherInput: await reads(held.otherInput),
      otherOutput: await reads(held.otherOutput),
      otherUpload: await reads(held.otherUpload),
      otherShaped: await reads(held.otherShaped),
      uncodedUpload: await reads(held.uncodedUpload),
    }).toEqual({
      ownInput: 'read',
      ownOutput: 'read',
      ownUpload: 'read',
      otherInput: 'AccessDenied',
      otherOutput: 'AccessDenied',
      otherUpload: 'AccessDenied',
      otherShaped: 'AccessDenied',
      uncodedUpload: 'AccessDenied',
    })
    expect({
      ownOutput: await writes(outputKey('split-pdf', now, jobA, 'page-1.pdf')),
      ownResult: await writes(resultObjectKey(jobA)),
      otherUtility: await writes(outputKey('html-pdf', now, jobA, 'page-1.pdf')),
      otherJob: await writes(outputKey('split-pdf', now, jobB, 'page-1.pdf')),
      otherResult: await writes(resultObjectKey(jobB)),
      otherShaped: await writes(outputKey('split-pdf', now, jobB, `x/${outputKey('split-pdf', now, jobA, 'p.pdf')}`)),
      upload: await writes(uploadKey(a, now, newFileId(now), 'x.pdf')),
    }).toEqual({
      ownOutput: 'written',
      ownResult: 'written',
      otherUtility: 'AccessDenied',
      otherJob: 'AccessDenied',
      otherResult: 'AccessDenied',
      otherShaped: 'AccessDenied',
      upload: 'AccessDenied',
    })
  })
})
