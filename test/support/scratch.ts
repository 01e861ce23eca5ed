import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Runs `use` with a directory of its own under the system's temporary directory, and removes the
 * directory when `use` returns or throws: the files a test hands to a command-line tool (qpdf,
 * pdftotext) never outlive it.
 */
export function inScratch<T>(prefix: string, use: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  try {
    return use(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The same for `use` that returns a promise: the directory goes once it settles. */
export async function inScratchAsync<T>(prefix: string, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  try {
    return await use(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
