import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { objectNameOf } from '../../contract/ids.js'
import { BIN_DIR } from '../platform/platform.js'
import { api, download } from './helpers/api.js'
import { jobOutputs, listKeys } from './helpers/storage.js'
import { readZip } from '../support/zips.js'
import { jobInputs } from './helpers/job-inputs.js'

const inputs = jobInputs()
const { files } = inputs

describe('zip-files through the whole platform', () => {
  it('given three URLs, a sync run answers 200 with one zip holding each file under its fileName', async () => {
    const text = Buffer.from('hello, zip\n'.repeat(1000))
    const image = randomBytes(5000)
    const csv = Buffer.from('a,b\n1,2\n')
    const input = {
      files: [
        { url: files.add('a.txt', text, 'text/plain'), fileName: 'a.txt' },
        { url: files.add('pic.png', image, 'image/png'), fileName: 'images/pic.png' },
        { url: files.add('data.csv', csv, 'text/csv'), fileName: 'reports/2024/data.csv' },
      ],
    }
    const res = await api('POST', '/v1/utilities/zip-files', { key: inputs.key, body: { input } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ utility: 'zip-files', status: 'succeeded', error: null })
    const [file] = res.body.result.files
    expect(res.body.result.files).toHaveLength(1)
    expect(file).toMatchObject({ name: 'files.zip', contentType: 'application/zip' })
    expect(file.key).toBe(`zip-files/${res.body.createdAt.slice(0, 10)}/${res.body.id}/files.zip`)
    const got = await download(file.url)
    expect(got.bytes.length).toBe(file.size)
    const entries = await readZip(got.bytes)
    expect(entries.map((e) => e.name)).toEqual(['a.txt', 'images/pic.png', 'reports/2024/data.csv'])
    expect(entries[0].data.equals(text)).toBe(true)
    expect(entries[0].compressionMethod).toBe(8) // deflated
    expect(entries[1].data.equals(image)).toBe(true)
    expect(entries[1].compressionMethod).toBe(0) // already compressed: stored
    expect(entries[2].data.equals(csv)).toBe(true)
  })

  it('packs files sent in the request (uploads of the key) beside a URL and an earlier upload, each entry named as given', async () => {
    const notes = Buffer.from('notes on this computer\n'.repeat(200))
    const photo = randomBytes(7000)
    const form = new FormData()
    form.append('files', new Blob([notes]), 'notes.txt')
    form.append('files', new Blob([photo]), 'photo.jpg')
    const res = await fetch(`${inject('gatewayUrl')}/v1/utilities/zip-files`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${inputs.key}`, Accept: 'application/zip' },
      body: form,
    })
    expect(res.status, await res.clone().text()).toBe(200)
    const entries = await readZip(Buffer.from(await res.arrayBuffer()))
    expect(entries.map((e) => e.name)).toEqual(['notes.txt', 'photo.jpg'])
    expect(entries[0].data.equals(notes)).toBe(true)
    expect(entries[1].data.equals(photo)).toBe(true)
    // An upload named by its s3:// url beside a URL, in a JSON run.
    const uploaded = await fetch(`${inject('gatewayUrl')}/v1/files?name=kept.txt`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${inputs.key}` },
      body: notes,
    })
    const { url } = (await uploaded.json()) as { url: string }
    const mixed = await api('POST', '/v1/utilities/zip-files', {
      key: inputs.key,
      body: {
        input: {
          files: [
            { url, fileName: 'from-upload.txt' },
            { url: files.add('web.txt', Buffer.from('web'), 'text/plain'), fileName: 'from-web.txt' },
          ],
        },
      },
    })
    expect(mixed.status, JSON.stringify(mixed.body)).toBe(200)
    const both = await readZip((await download(mixed.body.result.files[0].url)).bytes)
    expect(both.map((e) => [e.name, e.data.length])).toEqual([
      ['from-upload.txt', notes.length],
      ['from-web.txt', 3],
    ])
  })

  it('given a URL that answers 404, the run fails as upstream_rejected naming the file, with upstreamStatus', async () => {
    const input = {
      files: [
        { url: files.add('ok.txt', Buffer.from('ok'), 'text/plain'), fileName: 'ok.txt' },
        { url: `${files.url}/status/404`, fileName: 'gone.pdf' },
      ],
    }
    const res = await api('POST', '/v1/utilities/zip-files', { key: inputs.key, body: { input } })
    expect(res.status).toBe(422)
    expect(res.body.error).toMatchObject({ code: 'upstream_rejected', upstreamStatus: 404 })
    expect(res.body.error.message).toContain('files.1 ("gone.pdf")')
    expect(await jobOutputs(res.body)).toEqual([]) // no partial archive left behind
  })

  it('given a URL that redirects to the metadata address, the run is refused and nothing is fetched from there', async () => {
    const input = {
      files: [
        {
          url: files.redirect('http://169.254.169.254/latest/meta-data/iam/security-credentials/'),
          fileName: 'creds.txt',
        },
      ],
    }
    const res = await api('POST', '/v1/utilities/zip-files', { key: inputs.key, body: { input } })
    expect(res.status).toBe(422)
    expect(res.body.error.code).toBe('upstream_rejected')
    expect(res.body.error.message).toContain('redirects to a URL that is refused')
    expect(await jobOutputs(res.body)).toEqual([])
  })
})

describe('progress of a running job', () => {
  it('shows files zipped so far while it runs, in the API and in kubectl get utilityjobs, and the whole count once it succeeded', async () => {
    // 20 downloads that each take 800 ms (4 open at once): a run of ~4 s.
    const input = {
      files: Array.from({ length: 20 }, (_, i) => ({
        url: `${files.add(`p${i}.txt`, Buffer.from(`part ${i}\n`), 'text/plain').replace('/files/', '/slow/')}?ms=800`,
        fileName: `p${i}.txt`,
      })),
    }
    const res = await api('POST', '/v1/utilities/zip-files/jobs', { key: inputs.key, body: { input } })
    expect(res.status).toBe(202)
    const id = res.body.id as string
    const seen: Array<{ done: number; total: number | null; unit: string }> = []
    let kubectlRow = ''
    let job = res.body
    while (!['succeeded', 'failed'].includes(job.status)) {
      await new Promise((r) => setTimeout(r, 100))
      job = (await api('GET', `/v1/jobs/${id}`, { key: inputs.key })).body
      if (job.status === 'running' && job.progress) {
        seen.push(job.progress)
        if (!kubectlRow && job.progress.done > 0 && job.progress.done < 20) {
          kubectlRow = execFileSync(
            join(BIN_DIR, 'kubectl'),
            ['--kubeconfig', inject('kubeconfigPath'), '-n', 'dutil', 'get', 'utilityjob', objectNameOf(id)],
            { encoding: 'utf8' },
          )
        }
      }
    }
    expect(job.status).toBe('succeeded')
    // Seen part-way, counting up, never past the total.
    expect(seen.some((p) => p.done > 0 && p.done < 20)).toBe(true)
    for (const p of seen) expect(p).toMatchObject({ total: 20, unit: 'files' })
    expect(seen.map((p) => p.done)).toEqual([...seen.map((p) => p.done)].sort((a, b) => a - b))
    expect(kubectlRow.split('\n')[0]).toMatch(/\bPROGRESS\b/)
    expect(kubectlRow.split('\n')[1]).toMatch(/\b\d+\/20 files\b/)
    expect(job.progress).toMatchObject({ done: 20, total: 20, unit: 'files' })
    // The report the runner wrote while it ran is gone: the result carries the count.
    expect(await listKeys(`_jobs/${id}/`)).not.toContain(`_jobs/${id}/progress.json`)
    // Its input rode with the job, sealed: none was stored.
    expect(await listKeys(`_jobs/${id}/`)).not.toContain(`_jobs/${id}/input.json`)
  })
})
