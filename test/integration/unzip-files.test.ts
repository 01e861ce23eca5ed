import { randomBytes } from 'node:crypto'
import { CustomObjectsApi } from '@kubernetes/client-node'
import { describe, expect, inject, it } from 'vitest'
import { API_GROUP, API_VERSION, UTILITY_JOB } from '../../contract/api-group.js'
import type { UtilityJobResource } from '../../contract/crd-schemas.js'
import { objectNameOf } from '../../contract/ids.js'
import { until } from '../platform/wait-for.js'
import { api, download } from './helpers/api.js'
import { kubeConfig } from './helpers/keys.js'
import { jobOutputs, listKeys } from './helpers/storage.js'
import { hostile } from '../support/fixtures.js'
import { fileEntry, writeZip } from '../support/zip-writer.js'
import { readZip } from '../support/zips.js'
import { jobInputs } from './helpers/job-inputs.js'

const inputs = jobInputs()
const { files } = inputs

const unzip = (url: string) => api('POST', '/v1/utilities/unzip-files', { key: inputs.key, body: { input: { url } } })

describe('unzip-files through the whole platform', () => {
  it('given a zip with folders, a sync run answers 200 with one file reference per file entry, path and fileCount set', async () => {
    const contents: Record<string, Buffer> = {
      'readme.txt': Buffer.from('read me\n'),
      'docs/report.pdf': randomBytes(20_000),
      'docs/deep/ünïcode name.csv': Buffer.from('a,b\n1,2\n'.repeat(500)),
    }
    const zip = writeZip([
      fileEntry('docs/', Buffer.alloc(0), 0),
      ...Object.entries(contents).map(([name, data]) => fileEntry(name, data, name.endsWith('.pdf') ? 0 : 8)),
    ])
    const res = await unzip(files.add('bundle.zip', zip, 'application/zip'))
    expect(res.status).toBe(200)
    expect(res.body.result.fileCount).toBe(3)
    const day = res.body.createdAt.slice(0, 10)
    expect(res.body.result.files.map((f: { path: string }) => f.path)).toEqual(Object.keys(contents))
    for (const f of res.body.result.files) {
      expect(f.key).toBe(`unzip-files/${day}/${res.body.id}/${f.path}`)
      expect(f.name).toBe(f.path.split('/').pop())
      expect(f.pageNumber).toBeUndefined()
      const got = await download(f.url)
      expect(got.status).toBe(200)
      expect(got.bytes.equals(contents[f.path])).toBe(true)
      expect(f.size).toBe(contents[f.path].length)
    }
    expect(res.body.result.files[1].contentType).toBe('application/pdf')
  })

  it('reads an s3:// archive made by one of its own jobs (zip-files, then unzip-files)', async () => {
    const zipped = await api('POST', '/v1/utilities/zip-files', {
      key: inputs.key,
      body: {
        input: { files: [{ url: files.add('a.txt', Buffer.from('from storage'), 'text/plain'), fileName: 'a.txt' }] },
      },
    })
    expect(zipped.status).toBe(200)
    const res = await unzip(`s3://${inject('storage').bucket}/${zipped.body.result.files[0].key}`)
    expect(res.status).toBe(200)
    expect((await download(res.body.result.files[0].url)).bytes.toString()).toBe('from storage')
  })

  it('given a nested zip, stores the inner archive as one file and never expands it', async () => {
    const res = await unzip(files.add('nested.zip', hostile('nested.zip'), 'application/zip'))
    expect(res.status).toBe(200)
    expect(res.body.result.fileCount).toBe(2)
    const inner = res.body.result.files.find((f: { path: string }) => f.path === 'archives/inner.zip')
    expect(inner).toMatchObject({ name: 'inner.zip', contentType: 'application/zip' })
    const entries = await readZip((await download(inner.url)).bytes)
    expect(entries.map((e) => e.name)).toEqual(['inner.txt'])
    expect(await jobOutputs(res.body)).toHaveLength(2) // nothing but the two files
  })

  it.each([
    ['zip-slip-dotdot.zip', '".." segment (unsafe path)'],
    ['zip-slip-absolute.zip', 'absolute path (unsafe path)'],
    ['zip-slip-backslash.zip', 'backslash (unsafe path)'],
    ['zip-slip-drive-letter.zip', 'drive letter (unsafe path)'],
    ['zip-slip-symlink.zip', 'is a symbolic link'],
    ['zip-bomb-ratio.zip', 'compression ratio limit'],
    ['zip-bomb-overlap.zip', 'overlap (zip bomb)'],
    ['zip-bomb-lying-size.zip', 'does not match its declared size'],
    ['zip-bomb-entry-count.zip', 'at most 1000 are allowed'],
  ])('given %s, the run fails as upstream_rejected (%s) and nothing is written anywhere', async (fixture, why) => {
    const before = await listKeys('')
    const res = await unzip(files.add(fixture, hostile(fixture), 'application/zip'))
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ status: 'failed', result: null, error: { code: 'upstream_rejected' } })
    expect(res.body.error.message).toContain(why)
    expect(await jobOutputs(res.body)).toEqual([])
    // Nothing is new in the whole bucket (its input rode with the job): no escaped path.
    const added = (await listKeys('')).filter((k) => !before.includes(k))
    expect(added).toEqual([])
  })

  it('given a file that is not a zip, the run fails as upstream_rejected', async () => {
    const res = await unzip(files.add('fake.zip', hostile('not-a-pdf.pdf'), 'application/zip'))
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringContaining('not a valid zip archive'),
    })
  })
})

describe('unzip-files at its entry limit', () => {
  it('finishes a 1,000-entry archive with long multi-byte paths (~1.9 MB of file entries, over the etcd object limit): the API lists every file, the UtilityJob only what fits', async () => {
    const long = (i: number) =>
      `${'漢'.repeat(84)}/${'漢'.repeat(84)}/${String(i).padStart(4, '0')}-${'漢'.repeat(75)}.txt`
    const zip = writeZip(Array.from({ length: 1000 }, (_, i) => fileEntry(long(i), Buffer.from(`entry ${i}`), 0)))
    const res = await api('POST', '/v1/utilities/unzip-files/jobs', {
      key: inputs.key,
      body: { input: { url: files.add('many-long.zip', zip, 'application/zip') } },
    })
    expect(res.status).toBe(202)
    await until(
      'the job finished',
      async () =>
        ['succeeded', 'failed'].includes(
          (await api('GET', `/v1/jobs/${res.body.id}`, { key: inputs.key })).body.status,
        ),
      110_000,
      500,
    )
    const job = await api('GET', `/v1/jobs/${res.body.id}`, { key: inputs.key })
    expect(job.body.status, JSON.stringify(job.body.error)).toBe('succeeded')
    expect(job.body.result.fileCount).toBe(1000)
    expect(job.body.result.files).toHaveLength(1000)
    expect(job.body.result.files[999].path).toBe(long(999))
    expect((await download(job.body.result.files[999].url)).bytes.toString()).toBe('entry 999')
    const uj = (await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: 'dutil',
        plural: UTILITY_JOB.plural,
        name: objectNameOf(res.body.id),
      })) as UtilityJobResource
    const inStatus = uj.status!.result!.files.length
    expect(inStatus).toBeLessThan(1000)
    expect(uj.status!.result!.filesOmitted).toBe(1000 - inStatus)
    expect(Buffer.byteLength(JSON.stringify(uj))).toBeLessThan(512 * 1024)
    // The list summary counts every file too.
    const listed = (await api('GET', '/v1/jobs?limit=5', { key: inputs.key })).body.items.find(
      (j: { id: string }) => j.id === res.body.id,
    )
    expect(listed.fileCount).toBe(1000)
  }, 120_000)

  it('refuses a 10,000-entry archive at once with a clear upstream_rejected error', async () => {
    const zip = writeZip(Array.from({ length: 10_000 }, (_, i) => fileEntry(`f${i}.txt`, Buffer.from('x'), 0)))
    const res = await unzip(files.add('ten-thousand.zip', zip, 'application/zip'))
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({
      code: 'upstream_rejected',
      message: 'The zip archive is refused: it has 10000 entries; at most 1000 are allowed.',
    })
  })
})
