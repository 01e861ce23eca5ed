import { describe, expect, it } from 'vitest'
import { secretPathsOf } from '../contract/secret-fields.js'
import { editPdf } from '../runners/edit-pdf/utility.js'
import {
  installationKeyOf,
  isSealed,
  jobSealKey,
  newInstallationKey,
  openDocument,
  openInput,
  SealBroken,
  sealDocument,
  SEALED_FIELD,
  sealInput,
} from './sealed-input.js'

const installation = installationKeyOf(newInstallationKey())
const paths = secretPathsOf(editPdf.inputSchema)
const input = {
  url: 'https://example.com/a.pdf',
  password: 'correct horse',
  encrypt: { ownerPassword: 'battery staple' },
}

describe('sealed input secrets', () => {
  it('are stored without a password in the clear, and open with the job’s own key', async () => {
    const { stored, sealed } = await sealInput(input, paths, async () => installation, 'job_A')
    expect(sealed).toBe(true)
    expect(isSealed(stored)).toBe(true)
    const text = JSON.stringify(stored)
    expect(text).not.toContain('correct horse')
    expect(text).not.toContain('battery staple')
    expect(stored).toMatchObject({ url: input.url, encrypt: {}, [SEALED_FIELD]: expect.stringMatching(/^v1\./) })
    expect(openInput(stored, jobSealKey(installation, 'job_A'), 'job_A')).toEqual(input)
  })

  it("do not open with another job's key, under another job's id, changed, or without a key", async () => {
    const { stored } = await sealInput(input, paths, async () => installation, 'job_A')
    // The installation's key itself is not the job's.
    expect(() => openInput(stored, installation, 'job_A')).toThrow(SealBroken)
    expect(() => openInput(stored, jobSealKey(installation, 'job_B'), 'job_A')).toThrow(SealBroken)
    // A sealed input copied into another job's record does not open there with that job's key.
    expect(() => openInput(stored, jobSealKey(installation, 'job_A'), 'job_B')).toThrow(SealBroken)
    const other = installationKeyOf(newInstallationKey())
    expect(() => openInput(stored, jobSealKey(other, 'job_A'), 'job_A')).toThrow(SealBroken)
    const s = (stored as Record<string, string>)[SEALED_FIELD]!
    // One character of the ciphertext changed (the one before the last, whose bits all count):
    // to another character than it is, whatever the random nonce made it.
    const flipped = {
      ...(stored as object),
      [SEALED_FIELD]: s.slice(0, -2) + (s.at(-2) === 'A' ? 'B' : 'A') + s.slice(-1),
    }
    expect(() => openInput(flipped, jobSealKey(installation, 'job_A'), 'job_A')).toThrow(SealBroken)
    expect(() => openInput(stored, undefined, 'job_A')).toThrow(/given no key/)
  })

  it('leave an input without secrets as it came, needing no key', async () => {
    const plain = { url: 'https://example.com/a.pdf', flatten: true }
    let asked = false
    const { stored, sealed } = await sealInput(
      plain,
      paths,
      async () => {
        asked = true
        return installation
      },
      'job_A',
    )
    expect({ stored, sealed, asked }).toEqual({ stored: plain, sealed: false, asked: false })
    expect(openInput(plain, undefined, 'job_A')).toEqual(plain)
  })

  it('give each job its own key, the same every time', () => {
    expect(jobSealKey(installation, 'job_A').equals(jobSealKey(installation, 'job_A'))).toBe(true)
    expect(jobSealKey(installation, 'job_A').equals(jobSealKey(installation, 'job_B'))).toBe(false)
    expect(() => installationKeyOf(Buffer.alloc(16).toString('base64'))).toThrow(/shorter than 32 bytes/)
  })

  it('seal a whole input that rides with its job: nothing of it readable, opened only with its own key and id', async () => {
    const page = { html: '<h1>Invoice 4711 for ACME</h1>', pdfOptions: { format: 'A4' } }
    const key = jobSealKey(installation, 'job_A')
    const sealed = sealDocument(JSON.stringify(page), key, 'job_A')
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+$/)
    expect(Buffer.from(sealed.split('.')[2]!, 'base64url').toString('latin1')).not.toContain('Invoice')
    expect(openDocument(sealed, key, 'job_A')).toEqual(page)
    // An input whose passwords were sealed first comes back with them still sealed: openInput opens those.
    const { stored } = await sealInput(input, paths, async () => installation, 'job_A')
    expect(
      openInput(openDocument(sealDocument(JSON.stringify(stored), key, 'job_A'), key, 'job_A'), key, 'job_A'),
    ).toEqual(input)
    expect(() => openDocument(sealed, jobSealKey(installation, 'job_B'), 'job_A')).toThrow(SealBroken)
    expect(() => openDocument(sealed, key, 'job_B')).toThrow(/does not open/)
    expect(() => openDocument(sealed, undefined, 'job_A')).toThrow(/given no key/)
    expect(() => openDocument('v1.abc', key, 'job_A')).toThrow(/not in a known form/)
  })
})
