import { mkdtempSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { inputFrom, optionsBesideFiles, outputPath, progressLine } from './api-commands.js'
import { UsageError } from './usage-error.js'
import { fileScratch } from '../test/support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratchRoot = fileScratch('dutil-test-api-commands-')

describe('dutil run / jobs helpers', () => {
  it('builds the input from --url (a file list for zip-files), --input or --input-file, exactly one of them', () => {
    expect(inputFrom('split-pdf', { url: ['https://x.test/a.pdf'] })).toEqual({ url: 'https://x.test/a.pdf' })
    expect(inputFrom('zip-files', { url: ['https://x.test/a%20b.txt', 'https://x.test/dir/c.png'] })).toEqual({
      files: [
        { url: 'https://x.test/a%20b.txt', fileName: 'a b.txt' },
        { url: 'https://x.test/dir/c.png', fileName: 'c.png' },
      ],
    })
    expect(inputFrom('html-pdf', { input: '{"url":"https://x.test","pdfOptions":{"format":"A4"}}' })).toEqual({
      url: 'https://x.test',
      pdfOptions: { format: 'A4' },
    })
    expect(() => inputFrom('split-pdf', {})).toThrow(UsageError)
    expect(() => inputFrom('split-pdf', { url: ['a'], input: '{}' })).toThrow(/exactly one/)
    expect(() => inputFrom('split-pdf', { url: ['https://a', 'https://b'] })).toThrow(/one --url/)
    expect(inputFrom('merge-pdf', { url: ['https://x.test/b.pdf', 'https://x.test/a.pdf'] })).toEqual({
      files: [{ url: 'https://x.test/b.pdf' }, { url: 'https://x.test/a.pdf' }],
    })
    expect(() => inputFrom('merge-pdf', { url: ['https://x.test/a.pdf'] })).toThrow(/two or more --url/)
    expect(() => inputFrom('split-pdf', { input: '{nope' })).toThrow(/not valid JSON/)
  })

  it('shows state, elapsed time and the runner’s progress', () => {
    const job = { id: 'job_1', status: 'running', progress: { done: 120, total: 500, unit: 'pages' } } as never
    expect(progressLine(job, 0, 12_345)).toBe('job_1 running 12.3s 120/500 pages')
    expect(progressLine({ id: 'job_2', status: 'queued', progress: null } as never, 0, 500)).toBe('job_2 queued 0.5s')
  })

  it('keeps downloads inside --out: unzipped paths as folders, nothing above it', () => {
    expect(outputPath('/o', { name: 'b.txt', path: 'a/b.txt' })).toBe(join('/o', 'a', 'b.txt'))
    expect(outputPath('/o', { name: 'page-1.pdf' })).toBe(join('/o', 'page-1.pdf'))
    expect(outputPath('/o', { name: 'x', path: '/etc/passwd' })).toBe(join('/o', 'etc', 'passwd'))
    expect(() => outputPath('/o', { name: 'x', path: '../../x' })).toThrow(/outside/)
    expect(() => outputPath('/o', { name: 'x', path: 'a/../../x' })).toThrow(/outside/)
  })
})

describe('options beside local files', () => {
  it('come from --input or from --input-file (a password kept off the command line), not both', () => {
    const dir = mkdtempSync(join(scratchRoot, 'dutil-cli-'))
    const file = join(dir, 'options.json')
    writeFileSync(file, '{"password":"from a file","rotate":{"angle":90}}')
    expect(optionsBesideFiles({ inputFile: file })).toEqual({ password: 'from a file', rotate: { angle: 90 } })
    expect(optionsBesideFiles({ input: '{"flatten":true}' })).toEqual({ flatten: true })
    expect(optionsBesideFiles({})).toBeUndefined()
    expect(() => optionsBesideFiles({ input: '{}', inputFile: file })).toThrow(/not both/)
  })
})
