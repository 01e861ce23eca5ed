import { execFile } from 'node:child_process'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { REPO_ROOT } from '../platform/platform.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { createKey } from './helpers/keys.js'

/**
 * clients/python against the running platform: its pytest suite (clients/python/tests/platform)
 * with a fresh key, the input files served from here and a test certificate for its callback
 * receiver. What an API user's Python code sees: sync and async runs, waiting, downloads, typed
 * errors, idempotency keys and a verified callback.
 */
const venv = join(process.env.DUTIL_CACHE ?? join(homedir(), '.cache', 'dutil'), 'venv-client')
let files: FileServer

beforeAll(async () => {
  files = await new FileServer().start()
  files.add('three.pdf', await makePdf(3))
  files.add('not.pdf', Buffer.from('<html>not a pdf</html>'), 'text/html')
})
afterAll(() => files.stop())

describe('the Python client against the platform', () => {
  it('passes its platform tests', async () => {
    const { key, signingSecret } = await createKey({ name: 'python-client' })
    const tls = inject('callbackTls')
    const result = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        join(venv, 'bin', 'pytest'),
        ['-q', '-p', 'no:cacheprovider', '-rA', 'tests/platform'],
        {
          cwd: join(REPO_ROOT, 'clients', 'python'),
          env: {
            PATH: process.env.PATH,
            PYTHONPATH: join(REPO_ROOT, 'clients', 'python', 'src'),
            PYTHONDONTWRITEBYTECODE: '1',
            DUTIL_URL: inject('gatewayUrl'),
            DUTIL_API_KEY: key,
            DUTIL_SIGNING_SECRET: signingSecret,
            DUTIL_TEST_FILES: files.url,
            DUTIL_TEST_TLS_CERT: tls.certFile,
            DUTIL_TEST_TLS_KEY: tls.keyFile,
          },
          maxBuffer: 16 * 1024 * 1024,
          timeout: 300_000,
        },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, out: `${stdout}${stderr}` }),
      )
    })
    expect(result.code, result.out).toBe(0)
    expect(result.out).toMatch(/\b10 passed\b/)
  }, 300_000)
})
