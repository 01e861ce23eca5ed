import { describe, expect, it } from 'vitest'
import { editPdf } from '../runners/edit-pdf/utility.js'
import { catalog } from '../runners/catalog.js'
import { joinSecrets, secretPathsOf, splitSecrets } from './secret-fields.js'

describe('secret input fields', () => {
  it("are the writeOnly properties of a utility's schema, nested ones by their path", () => {
    expect(secretPathsOf(editPdf.inputSchema)).toEqual([
      ['encrypt', 'userPassword'],
      ['encrypt', 'ownerPassword'],
      ['password'],
    ])
    expect(secretPathsOf(catalog.get('pdf-info')!.inputSchema)).toEqual([['password']])
    expect(secretPathsOf(catalog.get('split-pdf')!.inputSchema)).toEqual([])
  })

  it('are found through unions, never twice', () => {
    const secret = { type: 'string', writeOnly: true }
    expect(
      secretPathsOf({
        anyOf: [
          { properties: { a: secret, b: { type: 'string' } } },
          { properties: { a: secret, c: { properties: { d: secret } } } },
        ],
      }),
    ).toEqual([['a'], ['c', 'd']])
  })

  it('are taken out of an input and put back where they were', () => {
    const paths = secretPathsOf(editPdf.inputSchema)
    const input = {
      url: 'https://example.com/a.pdf',
      password: 'old secret',
      encrypt: { userPassword: '', ownerPassword: 'new secret', print: 'none' },
    }
    const { rest, secrets } = splitSecrets(input, paths)
    expect(rest).toEqual({ url: 'https://example.com/a.pdf', encrypt: { print: 'none' } })
    expect(secrets).toEqual({
      password: 'old secret',
      'encrypt.userPassword': '',
      'encrypt.ownerPassword': 'new secret',
    })
    expect(input.password).toBe('old secret') // the caller's object is not changed
    expect(joinSecrets(rest, secrets!)).toEqual(input)
  })

  it('leave an input without secrets as it is', () => {
    const input = { url: 'https://example.com/a.pdf', flatten: true }
    expect(splitSecrets(input, secretPathsOf(editPdf.inputSchema))).toEqual({ rest: input, secrets: null })
  })
})
