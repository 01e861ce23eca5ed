import { CustomObjectsApi } from '@kubernetes/client-node'
import { describe, expect, inject, it } from 'vitest'
import { API_GROUP, API_VERSION, UTILITY_JOB } from '../../contract/api-group.js'
import { objectNameOf } from '../../contract/ids.js'
import { inputObjectKey } from '../../contract/runner-protocol.js'
import { apiStatus } from '../../platform/kube.js'
import { storageClient } from '../../platform/storage-client.js'
import { api, download } from './helpers/api.js'
import { readJob } from './helpers/direct-jobs.js'
import { jobInputs } from './helpers/job-inputs.js'
import { kubeConfig } from './helpers/keys.js'
import { listKeys } from './helpers/storage.js'
import { until } from '../platform/wait-for.js'
import { databaseClient } from './helpers/database.js'
import { makeEncryptedPdf, makePdf, qpdfEncryption } from '../support/pdfs.js'

const inputs = jobInputs()
const { files } = inputs
const coords = { group: API_GROUP, version: API_VERSION, namespace: 'dutil', plural: UTILITY_JOB.plural }

const run = (utility: string, input: Record<string, unknown>) =>
  api('POST', `/v1/utilities/${utility}`, { key: inputs.key, body: { input } })

describe('passwords: PDFs protected, opened and unprotected', () => {
  it('protects a PDF with passwords and permissions, which pdf-info then reads with its password', async () => {
    const url = files.add('contract.pdf', await makePdf(3))
    const res = await run('edit-pdf', {
      url,
      encrypt: { userPassword: 'open sesame', ownerPassword: 'the boss', print: 'none', copy: false },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.result).toMatchObject({ pageCount: 3, encrypted: true })
    const pdf = (await download(res.body.result.files[0].url)).bytes
    // As qpdf reads it: AES-256, the user password opens it, printing and copying are refused.
    const shown = qpdfEncryption(pdf, 'open sesame')
    expect(shown).toMatch(/R = 6/)
    expect(shown).toMatch(/Supplied password is user password/)
    expect(shown).toMatch(/print high resolution: not allowed/)
    expect(shown).toMatch(/extract for any purpose: not allowed/)
    expect(qpdfEncryption(pdf)).toMatch(/^Incorrect password supplied/)

    const s3 = `s3://${inject('storage').bucket}/${res.body.result.files[0].key}`
    const locked = await run('pdf-info', { url: s3 })
    expect(locked.body.result).toMatchObject({ encrypted: true, passwordRequired: true })
    expect(locked.body.result.pageCount).toBeUndefined()
    const opened = await run('pdf-info', { url: s3, password: 'open sesame' })
    expect(opened.status, JSON.stringify(opened.body)).toBe(200)
    expect(opened.body.result).toMatchObject({ pageCount: 3, encrypted: true, passwordRequired: true })
    const wrong = await run('pdf-info', { url: s3, password: 'open says me' })
    expect(wrong.status).toBe(422)
    expect(wrong.body.error).toMatchObject({
      code: 'upstream_rejected',
      message: 'The password given does not open the PDF.',
    })
  })

  it('edits a protected PDF only with its owner password, and removes the protection with a password alone', async () => {
    // makeEncryptedPdf: user password secret-user, owner password secret-owner.
    const url = files.add('locked.pdf', await makeEncryptedPdf(2))
    const without = await run('edit-pdf', { url, rotate: { angle: 90 } })
    expect(without.status).toBe(422)
    expect(without.body.error.message).toMatch(/protected by a password/)
    const userOnly = await run('edit-pdf', { url, password: 'secret-user', rotate: { angle: 90 } })
    expect(userOnly.status).toBe(422)
    expect(userOnly.body.error.message).toBe(
      'The password given opens the PDF but does not lift its permissions: edit-pdf needs its owner password.',
    )

    const unlocked = await run('edit-pdf', { url, password: 'secret-owner' })
    expect(unlocked.status, JSON.stringify(unlocked.body)).toBe(200)
    expect(unlocked.body.result).toMatchObject({ pageCount: 2, encrypted: false })
    const pdf = (await download(unlocked.body.result.files[0].url)).bytes
    expect(qpdfEncryption(pdf)).toMatch(/File is not encrypted/)

    // Opened with the owner password, protected again with a new one.
    const again = await run('edit-pdf', { url, password: 'secret-owner', encrypt: { userPassword: 'new one' } })
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    const reprotected = (await download(again.body.result.files[0].url)).bytes
    expect(qpdfEncryption(reprotected, 'new one')).toMatch(/Supplied password is owner password/)
    expect(qpdfEncryption(reprotected, 'secret-owner')).toMatch(/^Incorrect password supplied/)
  })

  it('refuses what cannot be a PDF password before anything runs', async () => {
    const url = files.add('plain.pdf', await makePdf(1))
    const tooLong = await run('edit-pdf', { url, password: 'ü'.repeat(64) })
    expect(tooLong.status).toBe(400)
    expect(tooLong.body.error.details).toContainEqual({
      path: 'input.password',
      message: 'is longer than 127 bytes in UTF-8, the most a PDF password holds',
    })
    const lineBreak = await run('edit-pdf', { url, encrypt: { userPassword: 'a\nb' } })
    expect(lineBreak.status).toBe(400)
    expect(lineBreak.body.error.details[0].path).toBe('input.encrypt.userPassword')
    const none = await run('edit-pdf', { url, encrypt: { print: 'none' } })
    expect(none.status).toBe(400)
    expect(none.body.error.details).toContainEqual({
      path: 'input.encrypt',
      message: 'needs a userPassword, an ownerPassword or both',
    })
  })

  it('carries a small input sealed with its job: nothing stored, nothing readable in the UtilityJob, the row or the API', async () => {
    const url = files.add('riding.pdf', await makeEncryptedPdf(1))
    const res = await api('POST', '/v1/utilities/edit-pdf/jobs', {
      key: inputs.key,
      body: { input: { url, password: 'secret-owner', encrypt: { userPassword: 'tr0ub4dor' } } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(202)
    const id: string = res.body.id
    const uj = await readJob(objectNameOf(id))
    expect(uj.spec.sealedInput).toMatch(/^v1\./)
    expect(uj.spec.inputSealed).toBeUndefined()
    // Neither the URL nor the passwords are readable in the UtilityJob (kubectl get -o yaml) or the row.
    expect(JSON.stringify(uj)).not.toMatch(/secret-owner|tr0ub4dor/)
    expect(JSON.stringify(uj)).not.toContain(url)
    const job = await api('GET', `/v1/jobs/${id}?wait=60`, { key: inputs.key })
    expect(job.body.status, JSON.stringify(job.body)).toBe('succeeded')
    expect(JSON.stringify(job.body)).not.toMatch(/secret-owner|tr0ub4dor|sealed/i)
    expect(qpdfEncryption((await download(job.body.result.files[0].url)).bytes, 'tr0ub4dor')).toMatch(/R = 6/)
    // The row kept the sealed input only while the job was queued: nothing of it is left once it ran.
    const db = databaseClient(inject('databaseUrl'))
    try {
      const row = (await db.query('SELECT * FROM jobs WHERE id = $1', [id])).rows[0] as Record<string, unknown>
      expect(row).toMatchObject({ state: 'succeeded', sealed_input: null })
      expect(JSON.stringify(row)).not.toMatch(/secret-owner|tr0ub4dor/)
      expect(JSON.stringify(row)).not.toContain(url)
    } finally {
      await db.end()
    }
    // Its input was never written to storage.
    expect(await listKeys(`_jobs/${id}/`)).not.toContain(inputObjectKey(id))
  })

  it('keeps passwords sealed where a large input is stored, and removes that input when the job goes', async () => {
    const url = files.add('sealed.pdf', await makeEncryptedPdf(1))
    // A hundred long bookmark titles: an input past what rides with a job, so it is stored.
    const bookmarks = Array.from({ length: 100 }, (_, i) => ({ title: `Chapter ${i + 1} ${'·'.repeat(60)}`, page: 1 }))
    const res = await api('POST', '/v1/utilities/edit-pdf/jobs', {
      key: inputs.key,
      body: { input: { url, password: 'secret-owner', encrypt: { userPassword: 'tr0ub4dor' }, bookmarks } },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(202)
    const id: string = res.body.id
    const name = objectNameOf(id)
    const s = inject('storage')
    const stored = await storageClient(s).getObject(s.bucket, inputObjectKey(id))
    const text = (await stored.toArray()).map((c: Buffer) => c.toString('utf8')).join('')
    expect(text).not.toContain('secret-owner')
    expect(text).not.toContain('tr0ub4dor')
    expect(JSON.parse(text)).toEqual({ url, encrypt: {}, bookmarks, $sealed: expect.stringMatching(/^v1\./) })
    // Neither the UtilityJob nor the job as the API shows it holds them.
    const uj = await readJob(name)
    expect(uj.spec.inputSealed).toBe(true)
    expect(uj.spec.sealedInput).toBeUndefined()
    expect(JSON.stringify(uj)).not.toMatch(/secret-owner|tr0ub4dor/)
    const job = await api('GET', `/v1/jobs/${id}?wait=60`, { key: inputs.key })
    expect(job.body.status).toBe('succeeded')
    expect(job.body.result.bookmarkCount).toBe(100)
    expect(JSON.stringify(job.body)).not.toMatch(/secret-owner|tr0ub4dor/)
    const pdf = (await download(job.body.result.files[0].url)).bytes
    expect(qpdfEncryption(pdf, 'tr0ub4dor')).toMatch(/R = 6/)

    // The UtilityJob removed (as its grace ends, or by hand): the sealed input goes before it does.
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .deleteNamespacedCustomObject({ ...coords, name })
    await until(
      'UtilityJob gone',
      async () => {
        try {
          await readJob(name)
          return false
        } catch (err) {
          return apiStatus(err) === 404
        }
      },
      30_000,
      200,
    )
    expect(await listKeys(`_jobs/${id}/`)).not.toContain(inputObjectKey(id))
    // The job's record and its output stay.
    expect((await api('GET', `/v1/jobs/${id}`, { key: inputs.key })).body.status).toBe('succeeded')
  })
})
