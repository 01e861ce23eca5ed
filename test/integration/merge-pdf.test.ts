import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PDFDocument, PDFName } from 'pdf-lib'
import { describe, expect, inject, it } from 'vitest'
import { api, download } from './helpers/api.js'
import { runnerPods } from './helpers/keys.js'
import { makeEncryptedPdf, makePdf, pdfWithPackedObjects } from '../support/pdfs.js'
import { MERGE_PDF_LIMITS } from '../../runners/merge-pdf/limits.js'
import { hostile } from '../support/fixtures.js'
import { jobOutputs, unfinishedUploads } from './helpers/storage.js'
import { jobInputs } from './helpers/job-inputs.js'
import { fileScratch } from '../support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratchRoot = fileScratch('dutil-test-merge-pdf-')

const inputs = jobInputs()
const { files } = inputs

/** A PDF of `n` pages whose widths are `first`, `first + 1`, …: the order shows after a merge. */
async function pdfWithWidths(n: number, first: number): Promise<Buffer> {
  const doc = await PDFDocument.create()
  for (let i = 0; i < n; i++) doc.addPage([first + i, 400])
  return Buffer.from(await doc.save())
}

/** A one-page PDF of `width` carrying `mb` MB of incompressible data: its bytes stay its size. */
async function heavyPdf(width: number, mb: number): Promise<Buffer> {
  const doc = await PDFDocument.create()
  const page = doc.addPage([width, 400])
  const noise = Buffer.alloc(mb * 1024 * 1024)
  for (let i = 0; i < noise.length; i += 4) noise.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, i)
  page.node.set(PDFName.of('Ballast'), doc.context.register(doc.context.stream(noise)))
  return Buffer.from(await doc.save())
}

const widthsOf = async (bytes: Uint8Array) => (await PDFDocument.load(bytes)).getPages().map((p) => p.getWidth())

describe('merge-pdf through the whole platform', () => {
  it('given three PDFs, a sync run answers 200 with one merged PDF holding their pages in the order given', async () => {
    const urls = [
      files.add('merge-a.pdf', await pdfWithWidths(2, 100)),
      files.add('merge-b.pdf', await pdfWithWidths(1, 200)),
      files.add('merge-c.pdf', await pdfWithWidths(3, 300)),
    ]
    const res = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: { input: { files: urls.map((url) => ({ url })) } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ utility: 'merge-pdf', status: 'succeeded', error: null })
    expect(res.body.result.pageCount).toBe(6)
    expect(res.body.result.files).toHaveLength(1)
    const [file] = res.body.result.files
    expect(file).toMatchObject({ name: 'merged.pdf', contentType: 'application/pdf' })
    expect(file.key).toBe(`merge-pdf/${res.body.createdAt.slice(0, 10)}/${res.body.id}/merged.pdf`)
    const got = await download(file.url)
    expect(got.status).toBe(200)
    expect(got.bytes.length).toBe(file.size)
    expect(await widthsOf(got.bytes)).toEqual([100, 101, 200, 300, 301, 302])
    // Progress counts pages merged; at the end the total is known.
    expect(res.body.progress).toMatchObject({ done: 6, total: 6, unit: 'pages' })
  })

  it("turns an input's pages and writes the merged PDF's title, author and keywords, as pdfinfo reads them", async () => {
    const urls = [
      files.add('turn-a.pdf', await pdfWithWidths(1, 100)),
      files.add('turn-b.pdf', await pdfWithWidths(2, 200)),
    ]
    const res = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: {
        input: {
          files: [{ url: urls[0] }, { url: urls[1], rotate: 90 }],
          info: { title: 'Jahresbericht 2026 — Anhang', author: 'Ana', keywords: ['annex', 'q4'] },
        },
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const got = await download(res.body.result.files[0].url)
    const doc = await PDFDocument.load(got.bytes, { updateMetadata: false })
    expect(doc.getPages().map((p) => p.getRotation().angle)).toEqual([0, 90, 90])
    const dir = mkdtempSync(join(scratchRoot, 'dutil-merge-info-'))
    writeFileSync(join(dir, 'merged.pdf'), got.bytes)
    const info = execFileSync('pdfinfo', [join(dir, 'merged.pdf')], { encoding: 'utf8' })
    expect(info).toMatch(/^Title: +Jahresbericht 2026 — Anhang$/m)
    expect(info).toMatch(/^Author: +Ana$/m)
    expect(info).toMatch(/^Keywords: +annex, q4$/m)
    const refused = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: { input: { files: [{ url: urls[0], rotate: 45 }, { url: urls[1] }], info: { date: 'x' } } },
    })
    expect(refused.status).toBe(400)
    expect(JSON.stringify(refused.body.error.details)).toContain('input.files.0.rotate')
  })

  it("chains from its own key's earlier jobs: pages split by split-pdf merge back in another order", async () => {
    const split = await api('POST', '/v1/utilities/split-pdf', {
      key: inputs.key,
      body: { input: { url: files.add('merge-chain.pdf', await pdfWithWidths(3, 400)) } },
    })
    expect(split.status).toBe(200)
    const bucket = inject('storage').bucket
    const page = (n: number) => ({ url: `s3://${bucket}/${split.body.result.files[n - 1].key}` })
    const res = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: {
        input: { files: [page(3), { url: files.add('merge-cover.pdf', await pdfWithWidths(1, 150)) }, page(1)] },
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(await widthsOf((await download(res.body.result.files[0].url)).bytes)).toEqual([402, 150, 400])
  })

  it("merges 30 files sent in one multipart request in their order (the request's uploads are one entry of the runner's grant)", async () => {
    const form = new FormData()
    for (let i = 0; i < 30; i++) form.append('files', new Blob([await pdfWithWidths(1, 100 + i)]), `part-${i}.pdf`)
    const res = await fetch(`${inject('gatewayUrl')}/v1/utilities/merge-pdf`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${inputs.key}`, Accept: 'application/pdf' },
      body: form,
    })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(await widthsOf(new Uint8Array(await res.arrayBuffer()))).toEqual(
      Array.from({ length: 30 }, (_, i) => 100 + i),
    )
  })

  it('streams a merged PDF larger than one upload part, and a refusal after it began leaves no object behind', async () => {
    const heavy = [
      files.add('merge-heavy-a.pdf', await heavyPdf(210, 6)),
      files.add('merge-heavy-b.pdf', await heavyPdf(220, 6)),
    ]
    const res = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: { input: { files: heavy.map((url) => ({ url })) } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const [file] = res.body.result.files
    expect(file.size).toBeGreaterThan(12 * 1024 * 1024)
    const got = await download(file.url)
    expect(got.bytes.length).toBe(file.size)
    expect(await widthsOf(got.bytes)).toEqual([210, 220])

    // Both heavy inputs' bytes went to storage before the third is read and refused.
    const refused = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: {
        input: {
          files: [
            ...heavy.map((url) => ({ url })),
            { url: files.add('merge-heavy-locked.pdf', await makeEncryptedPdf(1)) },
          ],
        },
      },
    })
    expect(refused.status).toBe(422)
    expect(refused.body.error.message).toBe('files.2: The PDF is password-protected (encrypted); it cannot be merged.')
    expect(await jobOutputs(refused.body)).toEqual([])
    expect(await unfinishedUploads(refused.body, 'merged.pdf')).toEqual([])
  })

  it('refuses fewer than two files before any job exists, naming the field', async () => {
    const res = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: { input: { files: [{ url: files.add('merge-alone.pdf', await makePdf(1)) }] } },
    })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(JSON.stringify(res.body.error.details)).toContain('input.files')
  })

  it('refuses an input packing more objects than one input may copy (a few MB that would write out as hundreds), naming it, with no output', async () => {
    const packed = files.add('merge-packed.pdf', pdfWithPackedObjects(MERGE_PDF_LIMITS.maxObjects + 10_000))
    const res = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: {
        input: { files: [{ url: files.add('merge-first.pdf', await makePdf(1)) }, ...Array(3).fill({ url: packed })] },
      },
    })
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({
      code: 'upstream_rejected',
      // The packed objects and the page's own four (catalog, page tree, page, its array).
      message: `files.1: The PDF has ${MERGE_PDF_LIMITS.maxObjects + 10_004} objects; at most ${MERGE_PDF_LIMITS.maxObjects} of one input can be merged.`,
    })
    expect(await jobOutputs(res.body)).toEqual([])
  })

  it('given a password-protected second input, fails as upstream_rejected naming it, with no output', async () => {
    const res = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: {
        input: {
          files: [
            { url: files.add('merge-ok.pdf', await makePdf(1)) },
            { url: files.add('merge-locked.pdf', await makeEncryptedPdf(2)) },
          ],
        },
      },
    })
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({
      code: 'upstream_rejected',
      message: 'files.1: The PDF is password-protected (encrypted); it cannot be merged.',
    })
    expect(await jobOutputs(res.body)).toEqual([])
  })

  it.each([
    ['truncated.pdf', 'not a valid PDF'],
    ['not-a-pdf.pdf', 'not a valid PDF'],
    ['decompression-bomb.pdf', 'decompression bomb'],
  ])(
    'given %s among the inputs, the run fails once as upstream_rejected (%s), with no retry and no output',
    async (fixture, why) => {
      const res = await api('POST', '/v1/utilities/merge-pdf', {
        key: inputs.key,
        body: {
          input: {
            files: [
              { url: files.add(`merge-${fixture}`, hostile(fixture)) },
              { url: files.add('merge-fine.pdf', await makePdf(1)) },
            ],
          },
        },
      })
      expect(res.status).toBe(422)
      expect(res.body.error.code).toBe('upstream_rejected')
      expect(res.body.error.message).toMatch(new RegExp(`^files\\.0: .*${why}`))
      expect(await jobOutputs(res.body)).toEqual([])
      expect(await runnerPods(res.body.id)).toBe(1)
    },
  )

  it('given an input URL that answers 404, the run fails naming the input, with upstreamStatus 404', async () => {
    const res = await api('POST', '/v1/utilities/merge-pdf', {
      key: inputs.key,
      body: {
        input: {
          files: [{ url: files.add('merge-first.pdf', await makePdf(1)) }, { url: `${files.url}/files/missing.pdf` }],
        },
      },
    })
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({ code: 'upstream_rejected', upstreamStatus: 404 })
    expect(res.body.error.message).toMatch(/^files\.1: /)
  })
})
