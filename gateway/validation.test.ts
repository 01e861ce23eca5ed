import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { catalog } from '../runners/catalog.js'
import { ApiError } from './api-error.js'
import { runRequestValidator, validateRunRequest } from './validation.js'

function problems(slug: string, body: unknown, mode: 'sync' | 'async' = 'async') {
  const u = catalog.get(slug)!
  try {
    validateRunRequest(body, u, mode)
    return []
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    expect(err.code).toBe('invalid_request')
    return err.details ?? []
  }
}

const paths = (slug: string, body: unknown) => problems(slug, body).map((d) => d.path)

describe('request envelope', () => {
  it('requires input and refuses unknown top-level fields', () => {
    expect(problems('split-pdf', {})).toContainEqual({ path: 'input', message: 'is required' })
    expect(problems('split-pdf', { input: { url: 'https://a.example/x.pdf' }, extra: 1 })).toContainEqual({
      path: 'extra',
      message: 'is not an allowed field',
    })
  })

  it('refuses a body that is not an object at (root)', () => {
    expect(problems('split-pdf', [1, 2])).toEqual([{ path: '(root)', message: 'must be an object' }])
  })

  it('keeps metadata within 50 keys, 64-character names and 4 KB', () => {
    const input = { url: 'https://a.example/x.pdf' }
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]))
    expect(paths('split-pdf', { input, metadata: many })).toEqual(['metadata'])
    expect(paths('split-pdf', { input, metadata: { ['k'.repeat(65)]: 1 } })).toEqual([`metadata.${'k'.repeat(65)}`])
    expect(problems('split-pdf', { input, metadata: { big: 'x'.repeat(4100) } })).toEqual([
      { path: 'metadata', message: 'must be at most 4096 bytes when serialised' },
    ])
    expect(
      problems('split-pdf', {
        input,
        metadata: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`.padEnd(64, 'x'), i])),
      }),
    ).toEqual([])
  })

  it('accepts callbackUrl only as an https URL of at most 2048 characters', () => {
    const input = { url: 'https://a.example/x.pdf' }
    expect(problems('split-pdf', { input, callbackUrl: 'https://hooks.example/cb' })).toEqual([])
    expect(paths('split-pdf', { input, callbackUrl: 'http://hooks.example/cb' })).toEqual(['callbackUrl'])
    expect(paths('split-pdf', { input, callbackUrl: `https://hooks.example/${'a'.repeat(2030)}` })).toEqual([
      'callbackUrl',
    ])
  })
})

describe('utility inputs', () => {
  it('limits input.url to 4096 characters and to http(s) or s3 schemes', () => {
    expect(problems('split-pdf', { input: { url: `https://a.example/${'a'.repeat(4100)}` } })).toContainEqual({
      path: 'input.url',
      message: 'must be at most 4096 characters',
    })
    expect(paths('split-pdf', { input: { url: 'ftp://a.example/x.pdf' } })).toEqual(['input.url'])
    expect(problems('split-pdf', { input: { url: 's3://dutil/in/x.pdf' } })).toEqual([])
    expect(problems('unzip-files', { input: { url: 's3://dutil/in/x.zip' } })).toEqual([])
    expect(problems('xls-to-xlsx', { input: { url: 's3://dutil/a.xls' } })).toEqual([])
    expect(paths('xls-to-xlsx', { input: { url: 'file:///a.xls' } })).toEqual(['input.url'])
  })

  it('checks every zip-files rule with the entry index in the path', () => {
    const f = (fileName: string, url = 'https://a.example/f') => ({ url, fileName })
    expect(problems('zip-files', { input: { files: [f('a.txt'), f('b/c.txt')] } })).toEqual([])
    expect(problems('zip-files', { input: { files: [f('a.txt'), f('b.txt'), f('a.txt')] } })).toEqual([
      { path: 'input.files.2.fileName', message: 'duplicates files.0.fileName; file names must be unique' },
    ])
    expect(problems('zip-files', { input: { files: [f('/etc/passwd')] } })).toEqual([
      { path: 'input.files.0.fileName', message: 'must not start with /' },
    ])
    expect(problems('zip-files', { input: { files: [f('a/../../b')] } })).toEqual([
      { path: 'input.files.0.fileName', message: 'must not contain ..' },
    ])
    expect(paths('zip-files', { input: { files: [f('a', 'file:///etc/passwd')] } })).toEqual(['input.files.0.url'])
    expect(problems('zip-files', { input: { files: [f('a', 's3://dutil/x')] } })).toEqual([])
    expect(paths('zip-files', { input: { files: Array.from({ length: 501 }, (_, i) => f(`f${i}`)) } })).toEqual([
      'input.files',
    ])
    expect(problems('zip-files', { input: { files: Array.from({ length: 500 }, (_, i) => f(`f${i}`)) } })).toEqual([])
    expect(paths('zip-files', { input: { files: [{ url: 'https://a.example/x' }] } })).toEqual([
      'input.files.0.fileName',
    ])
  })

  it('checks every pdfOptions rule', () => {
    const html = (pdfOptions: unknown) => problems('html-pdf', { input: { url: 'https://a.example/', pdfOptions } })
    expect(
      html({
        format: 'A4',
        landscape: true,
        scale: 1.5,
        printBackground: true,
        preferCSSPageSize: false,
        margin: { top: '10mm', bottom: '1in', left: '0', right: '12px' },
      }),
    ).toEqual([])
    expect(html({ format: 'B5' })).toEqual([
      { path: 'input.pdfOptions.format', message: 'is not one of the allowed values' },
    ])
    expect(html({ format: 'A4', width: '10in', height: '5in' })).toEqual([
      { path: 'input.pdfOptions', message: 'use either format or width/height, not both' },
    ])
    expect(html({ width: '10in' })).toEqual([
      { path: 'input.pdfOptions.height', message: 'width and height must be given together' },
    ])
    expect(html({ colour: 'red' })).toEqual([{ path: 'input.pdfOptions.colour', message: 'is not an allowed field' }])
    expect(html({ margin: { top: '1cm', inside: '2cm' } })).toEqual([
      { path: 'input.pdfOptions.margin.inside', message: 'is not an allowed field' },
    ])
    expect(html({ margin: { top: '10' } }).map((d) => d.path)).toEqual(['input.pdfOptions.margin.top'])
    expect(html({ margin: { bottom: 10 } })).toEqual([
      { path: 'input.pdfOptions.margin.bottom', message: 'must be a string' },
    ])
    expect(html({ scale: 3 }).map((d) => d.path)).toEqual(['input.pdfOptions.scale'])
    expect(html({ orientation: 'portrait', landscape: true })).toEqual([
      { path: 'input.pdfOptions.landscape', message: 'contradicts orientation' },
    ])
  })
})

describe('html-pdf page sources', () => {
  const html = (input: unknown) => problems('html-pdf', { input })
  const asset = (name: string, extra: object = {}) => ({
    url: `s3://dutil/uploads/2026-11-28/file_01JCZ8Y3E7XK2M9QW4T6R5S000/${name}`,
    ...extra,
  })

  it('takes the page as url or as html with its assets, and refuses both, neither and a web page with assets', () => {
    expect(
      html({ html: '<img src="logo.png">', assets: [asset('logo.png'), asset('a.css', { name: 'css/a.css' })] }),
    ).toEqual([])
    expect(
      html({
        url: 's3://dutil/uploads/2026-11-28/file_01JCZ8Y3E7XK2M9QW4T6R5S001/p.html',
        assets: [asset('logo.png')],
      }),
    ).toEqual([])
    expect(html({})).toEqual([{ path: 'input.url', message: 'give the page as one of url, html or markdown' }])
    expect(html({ url: 'https://a.example/', html: '<p>' })).toEqual([
      { path: 'input.html', message: 'give the page as one of url, html or markdown' },
    ])
    expect(html({ html: '<p>', markdown: '# x' })).toEqual([
      { path: 'input.markdown', message: 'give the page as one of url, html or markdown' },
    ])
    expect(
      html({
        markdown: '# Notes\n\n![logo](logo.png)',
        stylesheet: 'body { color: red }',
        assets: [asset('logo.png')],
      }),
    ).toEqual([])
    expect(
      html({ url: 's3://dutil/uploads/2026-11-28/file_01JCZ8Y3E7XK2M9QW4T6R5S001/README.md', stylesheet: '' }),
    ).toEqual([])
    expect(html({ html: '<p>', stylesheet: 'p {}' })).toEqual([
      {
        path: 'input.stylesheet',
        message: 'is taken with a Markdown page: markdown, or an s3:// document named .md or .markdown',
      },
    ])
    expect(html({ url: 'https://a.example/', assets: [asset('logo.png')] })).toEqual([
      {
        path: 'input.assets',
        message: 'are taken beside html, markdown or an s3:// page; a page on the web loads its own',
      },
    ])
    expect(html({ html: '' }).map((d) => d.path)).toEqual(['input.html'])
    expect(html({ html: 'x'.repeat(2 * 1024 * 1024 + 1) }).map((d) => d.path)).toEqual(['input.html'])
  })

  it('refuses an asset from the web, a name twice, and names that are no relative path', () => {
    expect(html({ html: '<p>', assets: [{ url: 'https://a.example/logo.png' }] }).map((d) => d.path)).toEqual([
      'input.assets.0.url',
    ])
    expect(html({ html: '<p>', assets: [asset('a.png'), asset('b.png', { name: 'a.png' })] })).toEqual([
      { path: 'input.assets.1', message: 'names "a.png" twice' },
    ])
    for (const name of [
      '/etc/passwd',
      '../a.png',
      'a/../b.png',
      'a//b.png',
      'img/./a.png',
      'a\\b.png',
      'a.png?x',
      'a\u0000',
    ])
      expect(
        html({ html: '<p>', assets: [asset('a.png', { name })] }).map((d) => d.path),
        name,
      ).toEqual(['input.assets.0.name'])
  })
})

describe('compiled validators', () => {
  afterEach(() => vi.restoreAllMocks())

  it('are compiled once at start and reused by every request, valid or not (no per-request growth)', () => {
    const compile = vi.spyOn(Ajv2020.prototype, 'compile')
    const u = catalog.get('split-pdf')!
    for (let i = 0; i < 500; i++) {
      expect(problems('split-pdf', { input: { url: 'https://a.example/x.pdf' } }, i % 2 ? 'sync' : 'async')).toEqual([])
      expect(problems('split-pdf', { input: {} }, i % 2 ? 'sync' : 'async')).toEqual([
        { path: 'input.url', message: 'is required' },
      ])
    }
    expect(compile).not.toHaveBeenCalled()
    expect(runRequestValidator(u, 'async')).toBe(runRequestValidator(u, 'async'))
    expect(runRequestValidator(u, 'sync')).not.toBe(runRequestValidator(u, 'async'))
  })

  it('exist for every utility in the catalog and both modes; only the async form takes callbackUrl', () => {
    for (const u of catalog.values()) {
      const body = { input: u.exampleInput, callbackUrl: 'https://hooks.example.com/x' }
      expect(runRequestValidator(u, 'async')(body), u.slug).toBe(true)
      expect(runRequestValidator(u, 'sync')(body), u.slug).toBe(false)
    }
  })
})
