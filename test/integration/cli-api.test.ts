import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { parse } from 'yaml'
import { REPO_ROOT } from '../platform/platform.js'
import { makePdf } from '../support/pdfs.js'
import { jobInputs } from './helpers/job-inputs.js'
import { fileScratch } from '../support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratchRoot = fileScratch('dutil-test-cli-api-')

/** `dutil run` and `dutil jobs` against the running platform, as a shell script uses them. */
const inputs = jobInputs()
const { files } = inputs

/** Runs the CLI as a child process (asynchronously: this process serves the input files). */
function dutil(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, 'bin', 'dutil.js'), ...args],
      {
        encoding: 'utf8',
        cwd: tmpdir(),
        env: { PATH: process.env.PATH, DUTIL_URL: inject('gatewayUrl'), DUTIL_API_KEY: inputs.key, ...env },
        timeout: 90_000,
      },
      (err, out, errOut) =>
        resolve({ code: err ? (((err as { code?: unknown }).code as number | null) ?? null) : 0, out, err: errOut }),
    )
  })
}

describe('dutil run and dutil jobs', () => {
  it('run --wait --out follows the job with a progress line, downloads its files and exits 0', async () => {
    files.add('cli.pdf', await makePdf(3))
    const out = mkdtempSync(join(scratchRoot, 'dutil-cli-'))
    const r = await dutil([
      'run',
      'split-pdf',
      '--url',
      `${files.url}/slow/cli.pdf?ms=4000`,
      '--wait',
      '--out',
      out,
      '--json',
    ])
    expect(r.err).toMatch(/job_\w+ (queued|running) \d+\.\ds/)
    expect(r.code).toBe(0)
    const job = JSON.parse(r.out)
    expect(job).toMatchObject({
      status: 'succeeded',
      utility: 'split-pdf',
      progress: { done: 3, total: 3, unit: 'pages' },
    })
    expect(r.err).toMatch(/succeeded \d+\.\ds 3\/3 pages/)
    const saved = readdirSync(out).sort()
    expect(saved).toEqual(job.result.files.map((f: { name: string }) => f.name).sort())
    expect(readFileSync(join(out, saved[0])).subarray(0, 5).toString()).toBe('%PDF-')
  })

  it('run without --wait prints the queued job; jobs get, jobs wait and jobs list find it', async () => {
    const url = files.add('cli1.pdf', await makePdf(1))
    const started = await dutil(['run', 'split-pdf', '--url', url])
    expect(started.code).toBe(0)
    const [id, status] = started.out.trim().split(' ')
    expect(id).toMatch(/^job_/)
    expect(status).toBe('queued')
    expect((await dutil(['jobs', 'wait', id])).out).toMatch(new RegExp(`^${id} succeeded in \\d+ ms: 1 file`))
    expect(JSON.parse((await dutil(['jobs', 'get', id, '--json'])).out)).toMatchObject({ id, status: 'succeeded' })
    const listed = JSON.parse((await dutil(['jobs', 'list', '--utility', 'split-pdf', '--limit', '3', '--json'])).out)
    expect(listed.length).toBeLessThanOrEqual(3)
    expect(listed[0].id).toBe(id)
    // An aligned table: the header, then the job under it, its AGE in kubectl's style.
    const table = (await dutil(['jobs', 'list', '--limit', '1'])).out.trimEnd().split('\n')
    expect(table[0].split(/\s{3,}/)).toEqual(['ID', 'UTILITY', 'MODE', 'STATUS', 'ERROR', 'AGE'])
    expect(table[1].split(/\s{3,}/)).toEqual([
      id,
      'split-pdf',
      'async',
      'succeeded',
      '-',
      expect.stringMatching(/^\d+[smhd]$/),
    ])
    expect(table[1].indexOf('split-pdf')).toBe(table[0].indexOf('UTILITY'))
    const wide = (await dutil(['jobs', 'list', '--limit', '1', '-o', 'wide'])).out.split('\n')[0]
    expect(wide.split(/\s{3,}/)).toEqual([
      'ID',
      'UTILITY',
      'MODE',
      'STATUS',
      'ERROR',
      'FILES',
      'TOTAL-MS',
      'SOURCE',
      'KEY',
      'CREATED',
      'AGE',
    ])
    expect(parse((await dutil(['jobs', 'get', id, '-o', 'yaml'])).out)).toMatchObject({ id, status: 'succeeded' })
    // Only a queued job can be cancelled: this one has finished (409 conflict, exit 3).
    const cancel = await dutil(['jobs', 'cancel', id])
    expect(cancel.code).toBe(3)
    expect(cancel.err).toMatch(/refused \(409 conflict\)/)
  })

  it('exit codes tell failed (1), usage (2), refused (3), unreachable (4) and timed out (5) apart', async () => {
    const notPdf = files.add('cli-not.pdf', Buffer.from('<html/>'), 'text/html')
    const failed = await dutil(['run', 'split-pdf', '--url', notPdf, '--wait'])
    expect(failed.code).toBe(1)
    expect(failed.out).toMatch(/failed: upstream_rejected: /)
    expect((await dutil(['run', 'split-pdf'])).code).toBe(2)
    expect((await dutil(['run', 'split-pdf', '--url', notPdf], { DUTIL_API_KEY: '' })).err).toContain('DUTIL_API_KEY')
    const refused = await dutil(['run', 'split-pdf', '--input', '{"url":"ftp://x"}'])
    expect(refused.code).toBe(3)
    expect(refused.err).toMatch(/refused \(400 invalid_request\)[\s\S]*input\.url/)
    expect((await dutil(['jobs', 'get', 'job_01ARZ3NDEKTSV4RRFFQ69G5FAV'])).code).toBe(3)
    expect((await dutil(['jobs', 'list'], { DUTIL_URL: 'http://127.0.0.1:1' })).code).toBe(4)
    files.add('cli-slow.pdf', await makePdf(1))
    const slow = await dutil([
      'run',
      'split-pdf',
      '--url',
      `${files.url}/slow/cli-slow.pdf?ms=8000`,
      '--wait',
      '--timeout',
      '1',
    ])
    expect(slow.code).toBe(5)
    expect(slow.out).toMatch(/is still (queued|running) after 1 s; it goes on/)
  })
})
