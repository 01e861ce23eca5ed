import { PDFDocument } from 'pdf-lib'
import { Webhook } from 'standardwebhooks'
import { describe, expect, inject, it } from 'vitest'
import { BatchV1Api } from '@kubernetes/client-node'
import { LABELS } from '../../contract/api-group.js'
import { api, download } from '../integration/helpers/api.js'
import { kubeConfig } from '../integration/helpers/keys.js'
import { firstKeyCommand } from '../support/chart-notes.js'
import { officeDocument } from '../support/fixtures.js'
import { makePdf } from '../support/pdfs.js'
import { decodePng } from '../support/pictures.js'
import { NS, RELEASE } from './chart-values.js'
import { execShellWords, helm, kubectl, putFile, renderPageWithPicture, runnerPodsOf } from './helpers.js'
import { verapdf } from '../support/verapdf.js'

/**
 * The README walkthrough on a real node: every program and runner runs from its image in a
 * container (containerd + runc) under the chart's securityContext, reached through Services.
 */
describe.skipIf(inject('nodeBlocker'))('the README walkthrough on a real node (kubelet, containerd, runc)', () => {
  let key = ''
  let signingSecret = ''

  it('creates the first key with the command the chart NOTES print, run as a pod with its output attached', () => {
    const command = firstKeyCommand(helm('get', 'notes', RELEASE, '--namespace', NS))
    expect(command).toContain('--rm -i')
    // Exactly the printed command (a shell parses its quoting), with this platform's kubeconfig.
    const args = JSON.parse(execShellWords(command.replace(/^kubectl /, '')))
    const out = kubectl(args)
    key = /key:\s+(du_live_[0-9a-f]{48})/.exec(out)?.[1] ?? ''
    signingSecret = /signing secret:\s+(whsec_\S+)/.exec(out)?.[1] ?? ''
    expect(key, out).not.toBe('')
    expect(signingSecret).not.toBe('')
  })

  it('splits a PDF synchronously in a runner container: non-root, read-only root filesystem, the files download', async () => {
    const url = await putFile('walkthrough.pdf', await makePdf(3))
    const res = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url } } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ status: 'succeeded', result: { pageCount: 3 } })
    for (const f of res.body.result.files) {
      const d = await download(f.url)
      expect(d.status).toBe(200)
      expect(d.bytes.subarray(0, 5).toString()).toBe('%PDF-')
    }
    // The job succeeds once its result is stored; the kubelet reports the runner's exit a moment later.
    let pod = (await runnerPodsOf(res.body.id))[0]
    await expect
      .poll(
        async () => {
          pod = (await runnerPodsOf(res.body.id))[0]
          return pod.status?.containerStatuses?.[0].state?.terminated
        },
        { timeout: 15_000, interval: 250 },
      )
      .toMatchObject({ exitCode: 0, reason: 'Completed' })
    expect(pod.status?.containerStatuses?.[0].containerID).toMatch(/^containerd:\/\//)
    expect(pod.spec?.securityContext?.runAsNonRoot).toBe(true)
    expect(pod.spec?.containers[0].securityContext?.readOnlyRootFilesystem).toBe(true)
  })

  it('converts a Word document with LibreOffice in its own runner container, read-only and non-root', async () => {
    const url = await putFile('walkthrough.docx', officeDocument('three-pages.docx'))
    const res = await api('POST', '/v1/utilities/office-pdf', { key, body: { input: { url, pageRanges: '2-' } } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ status: 'succeeded', result: { pageCount: 2, format: 'docx' } })
    const d = await download(res.body.result.files[0].url)
    expect(d.bytes.subarray(0, 5).toString()).toBe('%PDF-')
    const [pod] = await runnerPodsOf(res.body.id)
    expect(pod.spec?.containers[0].image).toMatch(/\/dutil-runner-office-pdf:/)
    expect(pod.spec?.containers[0].securityContext?.readOnlyRootFilesystem).toBe(true)
  })

  it('runs an async job and delivers the signed callback to a receiver in the cluster (https, by Service name)', async () => {
    const url = await putFile('async.pdf', await makePdf(2))
    const callbackUrl = `${inject('callbackBase')}/walkthrough`
    const accepted = await api('POST', '/v1/utilities/split-pdf/jobs', { key, body: { input: { url }, callbackUrl } })
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202)
    const done = await api('GET', `/v1/jobs/${accepted.body.id}?wait=60`, { key })
    expect(done.body).toMatchObject({ status: 'succeeded', result: { pageCount: 2 } })
    let got: Array<{ path: string; headers: Record<string, string>; body: string }> = []
    await expect
      .poll(
        async () => {
          got = (
            (await (await fetch(inject('filesUrl').replace(/\/files$/, '/received'))).json()) as typeof got
          ).filter((r) => r.path === '/callbacks/walkthrough')
          return got.length
        },
        { timeout: 60_000, interval: 500 },
      )
      .toBe(1)
    const event = new Webhook(signingSecret).verify(got[0].body, got[0].headers) as any
    expect(event).toMatchObject({ type: 'job.succeeded', data: { id: accepted.body.id, status: 'succeeded' } })
    await expect
      .poll(async () => (await api('GET', `/v1/jobs/${accepted.body.id}`, { key })).body.callback, { timeout: 30_000 })
      .toEqual({ url: callbackUrl, status: 'delivered', attempts: 1 })
  })

  it('renders HTML and Markdown to PDF with the Chromium in the html-pdf runner image, archival and accessible when asked', async () => {
    const url = await putFile(
      'page.html',
      '<!doctype html><title>r</title><h1>Quarterly report</h1><p>Rendered on a real node.</p>',
    )
    const res = await api('POST', '/v1/utilities/html-pdf', {
      key,
      body: { input: { url, pdfOptions: { format: 'A4' } } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const [file] = res.body.result.files
    const d = await download(file.url)
    expect(d.bytes.subarray(0, 5).toString()).toBe('%PDF-')
    expect(d.bytes.length).toBeGreaterThan(1000)
    // Markdown, rendered in the same runner (its bundle carries the Markdown renderer).
    const md = await api('POST', '/v1/utilities/html-pdf', {
      key,
      body: { input: { markdown: '# Release notes\n\n| Version | Date |\n|---|---|\n| 1.2 | today |' } },
    })
    expect(md.status, JSON.stringify(md.body)).toBe(200)
    const notes = await PDFDocument.load((await download(md.body.result.files[0].url)).bytes)
    expect(notes.getTitle()).toBe('Release notes')
    // Archival and accessible at once, completed in the same runner (pdf-lib, loaded for such a job).
    const both = await api('POST', '/v1/utilities/html-pdf', {
      key,
      body: {
        input: {
          html: '<!doctype html><html lang="en"><title>Report</title><h1>Report</h1><p>Kept for years.</p></html>',
          pdfOptions: { pdfa: 'PDF/A-2b', pdfua: true },
        },
      },
    })
    expect(both.status, JSON.stringify(both.body)).toBe(200)
    const archived = Buffer.from((await download(both.body.result.files[0].url)).bytes)
    expect(await verapdf(archived)).toEqual({ compliant: true, level: '2b', failed: [] })
    expect(await verapdf(archived, 'ua1')).toEqual({ compliant: true, level: 'ua1', failed: [] })
  })

  it("takes a picture of a page with html-image, whose program runs in html-pdf's runner image", async () => {
    const html =
      '<!doctype html><body style="margin:0;background:#fff"><div id="chart" style="width:90px;height:60px;background:rgb(0,0,255)"></div></body>'
    const res = await api('POST', '/v1/utilities/html-image', {
      key,
      body: { input: { html, imageOptions: { selector: '#chart', deviceScaleFactor: 2 } } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result).toMatchObject({ width: 180, height: 120 })
    const png = decodePng((await download(res.body.result.files[0].url)).bytes)
    expect({ width: png.width, height: png.height }).toEqual({ width: 180, height: 120 })
    expect(png.rgba(90, 60)).toEqual([0, 0, 255, 255])
  })

  it('edits a PDF with edit-pdf, qpdf and Ghostscript in its runner image: a page turned, a stamp, a title; pdf-info reads it back; protected with a password and read with it; made PDF/A', async () => {
    const url = await putFile('edit.pdf', await makePdf(2))
    const res = await api('POST', '/v1/utilities/edit-pdf', {
      key,
      body: {
        input: { url, rotate: { angle: 90, pages: '2' }, stamp: { text: 'APPROVED' }, info: { title: 'Edited' } },
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result).toMatchObject({ pageCount: 2, title: 'Edited' })
    const edited = await PDFDocument.load((await download(res.body.result.files[0].url)).bytes)
    expect(edited.getPages().map((p) => p.getRotation().angle)).toEqual([0, 90])
    expect(edited.getTitle()).toBe('Edited')
    // pdf-info in the same image, on the edited output by its s3:// name: its facts, nothing stored.
    const facts = await api('POST', '/v1/utilities/pdf-info', {
      key,
      body: { input: { url: `s3://${inject('storage').bucket}/${res.body.result.files[0].key}` } },
    })
    expect(facts.status, JSON.stringify(facts.body)).toBe(200)
    expect(facts.body.result).toMatchObject({ files: [], pageCount: 2, title: 'Edited', encrypted: false })
    // Protected with a password, then read with it: the passwords are sealed where the input is
    // stored, and the runner's Job carries the key that opens them (docs/adr/0042).
    const s3 = (key: string) => `s3://${inject('storage').bucket}/${key}`
    const locked = await api('POST', '/v1/utilities/edit-pdf', {
      key,
      body: { input: { url: s3(res.body.result.files[0].key), encrypt: { userPassword: 'walk through' } } },
    })
    expect(locked.status, JSON.stringify(locked.body)).toBe(200)
    const opened = await api('POST', '/v1/utilities/pdf-info', {
      key,
      body: { input: { url: s3(locked.body.result.files[0].key), password: 'walk through' } },
    })
    expect(opened.status, JSON.stringify(opened.body)).toBe(200)
    expect(opened.body.result).toMatchObject({ pageCount: 2, title: 'Edited', encrypted: true, passwordRequired: true })
    // Ghostscript in the same image: the edited PDF made archival (PDF/A-2b), which veraPDF passes.
    const archived = await api('POST', '/v1/utilities/edit-pdf', {
      key,
      body: { input: { url: s3(res.body.result.files[0].key), pdfa: 'PDF/A-2b', maxImageResolution: 150 } },
    })
    expect(archived.status, JSON.stringify(archived.body)).toBe(200)
    expect(archived.body.result).toMatchObject({ pageCount: 2, title: 'Edited' })
    const pdfa = Buffer.from((await download(archived.body.result.files[0].url)).bytes)
    expect(await verapdf(pdfa)).toEqual({ compliant: true, level: '2b', failed: [] })
  })

  it('takes documents from where people keep them: a file in the request (answered as the PDF itself), a page with its picture, a direct upload', async () => {
    const gateway = inject('gatewayUrl')
    const form = new FormData()
    form.append('file', new Blob([officeDocument('three-pages.docx')]), 'report.docx')
    const converted = await fetch(`${gateway}/v1/utilities/office-pdf`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, Accept: 'application/pdf' },
      body: form,
    })
    expect(converted.status, await converted.clone().text()).toBe(200)
    expect(converted.headers.get('content-type')).toBe('application/pdf')
    expect(
      Buffer.from(await converted.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-')
    const rendered = await renderPageWithPicture(gateway, key)
    expect(rendered.res.status, await rendered.res.clone().text()).toBe(200)
    expect(rendered.title).toBe('picture loaded')
    const pdf = await makePdf(2)
    const offer = await api('POST', `/v1/files?name=direct.pdf&size=${pdf.length}`, { key })
    expect(offer.status, JSON.stringify(offer.body)).toBe(201)
    expect((await fetch(offer.body.parts[0].url, { method: 'PUT', body: pdf })).status).toBe(200)
    const file = await api('POST', offer.body.completeUrl, { key })
    expect(file.body).toMatchObject({ object: 'file', size: pdf.length, contentType: 'application/pdf' })
    const split = await api('POST', '/v1/utilities/split-pdf', { key, body: { input: { url: file.body.url } } })
    expect(split.body).toMatchObject({ status: 'succeeded', result: { pageCount: 2 } })
  })

  it('passes `helm test`: a pod finds the gateway Service ready, its OpenAPI description and its 401; another runs one tiny job end to end', () => {
    // helm exits non-zero (helm() throws with its output) when the test pod fails.
    const out = helm('test', RELEASE, '--namespace', NS, '--timeout', '120s')
    expect(out).toContain('dutil-test-api')
    // The tiny job: a key made in the cluster, a runner started, upstream_rejected recorded.
    expect(out).toContain('dutil-test-job')
    expect(out).toMatch(/Succeeded/)
  })

  it('lists the jobs with kubectl get utilityjobs, each run by a batch Job the operator owns', async () => {
    const out = kubectl(['get', 'utilityjobs', '-n', NS])
    expect(out.split('\n').filter((l) => /\ssucceeded\s/.test(l)).length).toBeGreaterThanOrEqual(3)
    const jobs = await kubeConfig()
      .makeApiClient(BatchV1Api)
      .listNamespacedJob({ namespace: NS, labelSelector: LABELS.jobId })
    expect(jobs.items.length).toBeGreaterThanOrEqual(3)
    for (const j of jobs.items)
      expect(j.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'UtilityJob',
        name: j.metadata?.labels?.[LABELS.jobId],
        controller: true,
      })
  })
})
