import { PDFDocument } from 'pdf-lib'
import { describe, expect, inject, it } from 'vitest'
import { api, download } from './helpers/api.js'
import { runnerPods } from './helpers/keys.js'
import { makeEncryptedPdf, makePdf } from '../support/pdfs.js'
import { hostile } from '../support/fixtures.js'
import { jobOutputs } from './helpers/storage.js'
import { jobInputs } from './helpers/job-inputs.js'

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const JOB_ID = /^job_[0-9A-HJKMNP-TV-Z]{26}$/

const inputs = jobInputs()
const { files } = inputs

describe('split-pdf through the whole platform', () => {
  it('given a 3-page PDF, a sync run answers 200 with one downloadable single-page PDF per page', async () => {
    const url = files.add('three.pdf', await makePdf(3))
    const res = await api('POST', '/v1/utilities/split-pdf', {
      key: inputs.key,
      body: { input: { url }, metadata: { ticket: 'T-1', nested: { a: [1, 2] } } },
    })
    expect(res.status).toBe(200)
    const job = res.body
    expect(job).toMatchObject({
      object: 'job',
      utility: 'split-pdf',
      mode: 'sync',
      status: 'succeeded',
      error: null,
      callback: null,
      metadata: { ticket: 'T-1', nested: { a: [1, 2] } },
    })
    expect(job.id).toMatch(JOB_ID)
    expect(job.links).toEqual({ self: `/v1/jobs/${job.id}` })
    for (const t of [job.createdAt, job.startedAt, job.finishedAt]) expect(t).toMatch(ISO_MS)
    expect(job.timings.queueMs).toBe(0)
    expect(job.timings.totalMs).toBeGreaterThan(0)
    expect(job.timings.upstreamMs).toBeGreaterThanOrEqual(0)
    expect(job.timings.storageMs).toBeGreaterThanOrEqual(0)
    expect(job.result.pageCount).toBe(3)
    expect(job.result.files).toHaveLength(3)
    const day = job.createdAt.slice(0, 10)
    for (const [i, f] of job.result.files.entries()) {
      expect(f.pageNumber).toBe(i + 1)
      expect(f.key).toBe(`split-pdf/${day}/${job.id}/${f.name}`)
      expect(f.contentType).toBe('application/pdf')
      expect(f.urlExpiresAt).toMatch(ISO_MS)
      expect(f.path).toBeUndefined()
      const got = await download(f.url)
      expect(got.status).toBe(200)
      expect(got.bytes.length).toBe(f.size)
      const page = await PDFDocument.load(got.bytes)
      expect(page.getPageCount()).toBe(1)
    }
  })

  it('splits into files of every n pages, or takes the pages asked for, one file each or one in all; a page past the end fails upstream_rejected', async () => {
    const url = files.add('five-for-modes.pdf', await makePdf(5))
    // Each page of makePdf says its number: the text of a file tells which pages it holds.
    const pagesOf = async (f: { url: string }) => {
      const doc = await PDFDocument.load((await download(f.url)).bytes)
      return doc.getPageCount()
    }
    const run = async (input: Record<string, unknown>) =>
      (await api('POST', '/v1/utilities/split-pdf', { key: inputs.key, body: { input: { url, ...input } } })).body
    const every = await run({ every: 2 })
    expect(every.result.files.map((f: { name: string; pageNumber: number }) => [f.name, f.pageNumber])).toEqual([
      ['pages-001-002.pdf', 1],
      ['pages-003-004.pdf', 3],
      ['page-005.pdf', 5],
    ])
    expect(await Promise.all(every.result.files.map(pagesOf))).toEqual([2, 2, 1])
    const picked = await run({ pages: '4-,1' })
    expect(picked.result.files.map((f: { name: string }) => f.name)).toEqual([
      'page-004.pdf',
      'page-005.pdf',
      'page-001.pdf',
    ])
    expect(picked.progress).toMatchObject({ done: 3, total: 3, unit: 'pages' })
    const unified = await run({ pages: '2-3,5', unify: true })
    expect(unified.result.files.map((f: { name: string }) => f.name)).toEqual(['pages-002-and-more.pdf'])
    expect(await pagesOf(unified.result.files[0])).toBe(3)
    const past = await run({ pages: '4-6' })
    expect(past).toMatchObject({
      status: 'failed',
      error: { code: 'upstream_rejected', message: 'The PDF has 5 pages; the pages asked for (4-6) go past its end.' },
    })
    const both = await api('POST', '/v1/utilities/split-pdf', {
      key: inputs.key,
      body: { input: { url, every: 2, pages: '1' } },
    })
    expect(both.status).toBe(400)
    expect(both.body.error.details).toContainEqual({ path: 'input.every', message: 'give every or pages, not both' })
  })

  it('given an async run, answers 202 with Location at once, and ?wait=30 returns the finished job', async () => {
    const url = files.add('five.pdf', await makePdf(5))
    const res = await api('POST', '/v1/utilities/split-pdf/jobs', { key: inputs.key, body: { input: { url } } })
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({
      status: 'queued',
      mode: 'async',
      startedAt: null,
      finishedAt: null,
      result: null,
      error: null,
      metadata: null,
    })
    expect(res.body.timings).toEqual({ queueMs: null, upstreamMs: null, storageMs: null, totalMs: null })
    expect(res.headers.get('location')).toBe(`/v1/jobs/${res.body.id}`)

    const done = await api('GET', `${res.headers.get('location')}?wait=30`, { key: inputs.key })
    expect(done.status).toBe(200)
    expect(done.body.status).toBe('succeeded')
    expect(done.body.result.pageCount).toBe(5)
    expect(done.body.timings.queueMs).toBeGreaterThanOrEqual(0)
    expect(Date.parse(done.body.startedAt)).toBeGreaterThanOrEqual(Date.parse(done.body.createdAt))
    expect(Date.parse(done.body.finishedAt)).toBeGreaterThanOrEqual(Date.parse(done.body.startedAt))
  })

  it('renews presigned links on every read', async () => {
    const url = files.add('one.pdf', await makePdf(1))
    const first = await api('POST', '/v1/utilities/split-pdf', { key: inputs.key, body: { input: { url } } })
    await new Promise((r) => setTimeout(r, 1100))
    const again = await api('GET', `/v1/jobs/${first.body.id}`, { key: inputs.key })
    expect(again.body.result.files[0].url).not.toBe(first.body.result.files[0].url)
    expect(Date.parse(again.body.result.files[0].urlExpiresAt)).toBeGreaterThan(
      Date.parse(first.body.result.files[0].urlExpiresAt),
    )
  })

  it('given a file that is not a PDF, the sync run answers 422 with the failed job', async () => {
    const url = files.add('not.pdf', Buffer.from('<html>not a pdf</html>'), 'text/html')
    const res = await api('POST', '/v1/utilities/split-pdf', { key: inputs.key, body: { input: { url } } })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({
      object: 'job',
      status: 'failed',
      result: null,
      error: { code: 'upstream_rejected', message: 'The file is not a valid PDF.' },
    })
    expect(res.body.finishedAt).toMatch(ISO_MS)
  })

  it('given a password-protected PDF, the run fails as upstream_rejected saying so', async () => {
    const url = files.add('locked.pdf', await makeEncryptedPdf(2))
    const res = await api('POST', '/v1/utilities/split-pdf', { key: inputs.key, body: { input: { url } } })
    expect(res.status).toBe(422)
    expect(res.body.error.code).toBe('upstream_rejected')
    expect(res.body.error.message).toContain('password-protected')
  })

  it("given an s3:// URL of one of its own job's outputs, splits it from storage (jobs chain); another bucket is 404", async () => {
    const first = await api('POST', '/v1/utilities/split-pdf', {
      key: inputs.key,
      body: { input: { url: files.add('chain.pdf', await makePdf(2)) } },
    })
    expect(first.status).toBe(200)
    const bucket = inject('storage').bucket
    const res = await api('POST', '/v1/utilities/split-pdf', {
      key: inputs.key,
      body: { input: { url: `s3://${bucket}/${first.body.result.files[1].key}` } },
    })
    expect(res.status).toBe(200)
    expect(res.body.result.pageCount).toBe(1)
    const other = await api('POST', '/v1/utilities/split-pdf', {
      key: inputs.key,
      body: { input: { url: `s3://someone-elses-bucket/${first.body.result.files[1].key}` } },
    })
    expect(other.status).toBe(404)
    expect(other.body.error.code).toBe('not_found')
  })

  it('given an input URL that answers 404, the run fails with upstreamStatus 404', async () => {
    const res = await api('POST', '/v1/utilities/split-pdf', {
      key: inputs.key,
      body: { input: { url: `${files.url}/files/missing.pdf` } },
    })
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({ code: 'upstream_rejected', upstreamStatus: 404 })
  })
})

describe('split-pdf against the hostile corpus', () => {
  it.each([
    ['encrypted.pdf', 'password-protected'],
    ['truncated.pdf', 'not a valid PDF'],
    ['not-a-pdf.pdf', 'not a valid PDF'],
    ['decompression-bomb.pdf', 'decompression bomb'],
  ])('given %s, the run fails once as upstream_rejected (%s), with no retry and no output', async (fixture, why) => {
    const url = files.add(fixture, hostile(fixture))
    const res = await api('POST', '/v1/utilities/split-pdf', { key: inputs.key, body: { input: { url } } })
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ status: 'failed', result: null, error: { code: 'upstream_rejected' } })
    expect(res.body.error.message).toContain(why)
    expect(await jobOutputs(res.body)).toEqual([])
    expect(await runnerPods(res.body.id)).toBe(1) // classified: the Job failed at once, no retry
  })

  it('given an input URL that redirects to the metadata address, the run is refused before connecting there', async () => {
    const url = files.redirect('http://169.254.169.254/latest/meta-data/')
    const res = await api('POST', '/v1/utilities/split-pdf', { key: inputs.key, body: { input: { url } } })
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({
      code: 'upstream_rejected',
      message: expect.stringContaining('redirects to a URL that is refused'),
    })
  })
})
