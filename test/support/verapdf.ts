import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

/** veraPDF's jars, fetched by test/platform/install-deps.sh. */
const lib = join(process.env.DUTIL_CACHE ?? join(homedir(), '.cache', 'dutil'), 'verapdf', 'lib')

export interface PdfaVerdict {
  /** Whether veraPDF found the document compliant with the level it claims. */
  compliant: boolean
  /** The level veraPDF checked it against, as it prints it ("1b", "2b", "3b", "ua1"). */
  level: string
  /** The clauses of ISO 19005 it found broken ("6.8-5"). */
  failed: string[]
}

/**
 * veraPDF's verdict on a PDF/A document, against the level its metadata claims (the PDF
 * Association's validator, the one archives run; a document that claims none is checked as 1b),
 * or with `ua1` on an accessible one against PDF/UA-1's machine-checkable rules.
 */
export async function verapdf(pdf: Buffer, flavour?: 'ua1'): Promise<PdfaVerdict> {
  const dir = mkdtempSync(join(tmpdir(), 'dutil-verapdf-'))
  try {
    const file = join(dir, 'document.pdf')
    writeFileSync(file, pdf)
    const { stdout } = await promisify(execFile)(
      'java',
      [
        // A short-lived JVM: its quick compiler only and one GC thread (half the CPU, a third less time).
        '-XX:TieredStopAtLevel=1',
        '-XX:+UseSerialGC',
        '-cp',
        `${lib}/*`,
        'org.verapdf.apps.GreenfieldCliWrapper',
        '--format',
        'text',
        '-v',
        ...(flavour ? ['--flavour', flavour] : []),
        file,
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    ).catch((err: { stdout?: string; code?: number }) => {
      // veraPDF exits 1 for a document that is not compliant: its verdict is still printed.
      if (err.code === 1 && err.stdout) return { stdout: err.stdout }
      throw err
    })
    const verdict = /^(PASS|FAIL) \S+ (\w+)$/m.exec(stdout)
    if (!verdict) throw new Error(`veraPDF printed no verdict: ${stdout.slice(0, 500)}`)
    return {
      compliant: verdict[1] === 'PASS',
      level: verdict[2],
      failed: [...stdout.matchAll(/^\s+FAIL (\S+)$/gm)].map((m) => m[1]),
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
