import { execFile } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PDFDocument } from 'pdf-lib'
import { describe, expect, inject, it } from 'vitest'
import { shellQuote } from '../node-agent/mount-script.js'
import { REPO_ROOT } from '../platform/platform.js'
import { officeDocument } from '../support/fixtures.js'
import { makeEncryptedPdf, makePdf, qpdfEncryption } from '../support/pdfs.js'
import { jobInputs } from './helpers/job-inputs.js'
import { fileScratch } from '../support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratchRoot = fileScratch('dutil-test-cli-readme-')

/**
 * The CLI README's command blocks (contexts, jobs, keys), run by bash line by line as written
 * against this platform. What differs from a user's installation is swapped: the API's and the
 * example files' addresses, the cluster's kubeconfig and context, and the ids (`du_live_…`,
 * `job_01M9…`, `key_01M9…`) for what earlier commands printed. A command ends with exit 0 unless
 * its comment in the README says which other exit it ends with. (The install block is the
 * packed CLI's own test, test/integration/cli-package.test.ts; completion, cli/completion.test.ts.)
 */
function readmeCommands(): Array<{ line: string; exit: number }> {
  const readme = readFileSync(join(REPO_ROOT, 'cli', 'README.md'), 'utf8')
  const out: Array<{ line: string; exit: number }> = []
  for (const section of ['Contexts', 'Jobs', 'Local files', 'Keys and the console']) {
    const block = new RegExp(`## ${section}[^\\n]*\\n[\\s\\S]*?\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\``).exec(readme)
    if (!block) throw new Error(`cli/README.md has no sh block under "${section}"`)
    let current = ''
    for (const line of block[1].split('\n')) {
      current += (current ? '\n' : '') + line
      if (line.endsWith('\\')) continue
      const exit = /#.*\bexit (\d)\b/.exec(current)
      out.push({ line: current, exit: exit ? Number(exit[1]) : 0 })
      current = ''
    }
  }
  return out
}

function bash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { cwd, env, encoding: 'utf8', timeout: 110_000 }, (err, out, errOut) =>
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, out, err: errOut }),
    )
  })
}

const inputs = jobInputs()
const { files } = inputs

describe("the CLI README's commands", () => {
  it('run as written: contexts, every utility, waiting, listing and cancelling jobs, keys and the first admin', async () => {
    // A 1×1 PNG.
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    )
    // Where the file server serves a file by its name.
    const served = files.add('report.pdf', await makePdf(3)).slice(0, -'report.pdf'.length)
    for (const [name, body, type] of [
      ['a.pdf', await makePdf(1), 'application/pdf'],
      ['cover.pdf', await makePdf(1), 'application/pdf'],
      ['b.png', png, 'image/png'],
      ['slides.pptx', officeDocument('slides.pptx'), 'application/octet-stream'],
      ['page.html', Buffer.from('<html><body><h1>dutil</h1></body></html>'), 'text/html'],
    ] as const)
      files.add(name, body, type)
    const scratch = mkdtempSync(join(scratchRoot, 'dutil-cli-readme-'))
    // The local files of the README's examples, on the user's disk.
    writeFileSync(join(scratch, 'invoice.docx'), officeDocument('text.docx'))
    writeFileSync(join(scratch, 'cover.pdf'), await makePdf(1))
    writeFileSync(join(scratch, 'contract.pdf'), await makePdf(2))
    // makeEncryptedPdf's owner password, in the options file the README names.
    writeFileSync(join(scratch, 'locked.pdf'), await makeEncryptedPdf(2))
    writeFileSync(join(scratch, 'unlock.json'), JSON.stringify({ password: 'secret-owner' }))
    writeFileSync(join(scratch, 'README.md'), '# Read me\n\nA Markdown file on the disk.\n')
    const bin = join(scratch, 'bin')
    mkdirSync(bin)
    writeFileSync(
      join(bin, 'dutil'),
      `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(join(REPO_ROOT, 'bin', 'dutil.js'))} "$@"\n`,
    )
    chmodSync(join(bin, 'dutil'), 0o755)
    const values = new Map<string, string>([
      ['https://dutil.staging.example.com', inject('gatewayUrl')],
      ['https://dutil.example.com', inject('gatewayUrl')],
      ['du_live_…', inputs.key],
      ['~/.kube/prod.yaml', inject('kubeconfigPath')],
      ['prod-admin', 'dutil-local'],
      ['https://example.com/', served],
      ['"https://example.com"', `"${served}page.html"`],
    ])
    const swap = (line: string) => [...values].reduce((c, [from, to]) => c.replaceAll(from, to), line)
    const env: NodeJS.ProcessEnv = {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: scratch,
      DUTIL_CONFIG: join(scratch, 'config.yaml'),
    }
    const seen: string[] = []
    for (const { line, exit } of readmeCommands()) {
      const r = await bash(swap(line), scratch, env)
      expect(r.code, `${swap(line)}\n${r.out}\n${r.err}`).toBe(exit)
      seen.push(`${line}\n${r.out}`)
      if (!values.has('job_01M9…')) {
        const id = /\bjob_[0-9A-Z]{26}\b/.exec(r.out)
        if (id) values.set('job_01M9…', id[0])
      }
      if (line.includes('keys create')) values.set('key_01M9…', /\bkey_[0-9A-Z]{26}\b/.exec(r.out)![0])
      if (line.includes('files upload')) values.set('file_01M9…', /\bfile_[0-9A-Z]{26}\b/.exec(r.out)![0])
    }
    const output = (needle: string) => seen.find((s) => s.startsWith(needle))!
    expect(output('dutil config get-contexts')).toMatch(/\*\s+prod\s/)
    expect(output('dutil jobs get')).toContain(`"id": "${values.get('job_01M9…')}"`)
    // The files `--out` downloaded: the 3 pages of the split, the merged PDF, the slides as a PDF.
    const pdfs = (dir: string) =>
      readdirSync(join(scratch, dir)).filter(
        (f) =>
          readFileSync(join(scratch, dir, f))
            .subarray(0, 5)
            .toString() === '%PDF-',
      )
    expect(pdfs('pages')).toHaveLength(3)
    expect(pdfs('merged')).toHaveLength(1)
    expect(pdfs('slides')).toEqual(['slides.pdf'])
    // html-image's picture of the page, named after it.
    expect(readdirSync(join(scratch, 'shots'))).toEqual(['page.png'])
    expect(
      readFileSync(join(scratch, 'shots', 'page.png'))
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG')
    // Local files: uploaded, converted and downloaded; merged with a URL; listed; deleted.
    expect(readFileSync(join(scratch, 'invoice.pdf')).subarray(0, 5).toString()).toBe('%PDF-')
    expect(readFileSync(join(scratch, 'README.pdf')).subarray(0, 5).toString()).toBe('%PDF-')
    expect(output('dutil run office-pdf ./invoice.docx')).toContain('succeeded')
    // A local file with the utility's options beside it: stamped, titled, named as it was.
    const edited = await PDFDocument.load(readFileSync(join(scratch, 'edited', 'contract.pdf')))
    expect(edited.getTitle()).toBe('Contract')
    expect(edited.getPageCount()).toBe(2)
    // A protected file, its password from a file: the protection removed.
    expect(qpdfEncryption(readFileSync(join(scratch, 'open', 'locked.pdf')))).toMatch(/File is not encrypted/)
    expect(pdfs('merged')).toHaveLength(1)
    expect(output('dutil files list')).toContain('contract.pdf')
    expect(output('dutil files delete')).toContain(`${values.get('file_01M9…')} deleted`)
  }, 600_000)
})
