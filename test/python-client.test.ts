import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { REPO_ROOT } from './platform/platform.js'

/**
 * clients/python without a platform: its unit tests, its formatting and types, its generated
 * models against docs/openapi.yaml, and the package as a user gets it (the built wheel installed
 * into a fresh virtual environment outside this repository, and a strict program type-checked
 * against it). test/integration/python-client.test.ts runs it against the platform.
 */
const pkg = join(REPO_ROOT, 'clients', 'python')
const venv = join(process.env.DUTIL_CACHE ?? join(homedir(), '.cache', 'dutil'), 'venv-client')
const wheels = join(venv, '..', 'python-wheels')
const bin = (name: string) => join(venv, 'bin', name)
const scratch = mkdtempSync(join(tmpdir(), 'dutil-python-user-'))
// mypy's caches live beside the tools: a warm run re-checks only what changed.
const mypyCache = join(venv, '..', 'mypy-cache')
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

async function run(cmd: string, args: string[], cwd = pkg): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(cmd, args, {
      cwd,
      env: { ...process.env, PYTHONPATH: join(pkg, 'src'), PYTHONDONTWRITEBYTECODE: '1' },
      maxBuffer: 16 * 1024 * 1024,
    })
    return { code: 0, out: `${stdout}${stderr}` }
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}

/** The python code blocks of a Markdown file, in order. */
function pythonBlocks(file: string): string[] {
  const blocks = [...readFileSync(file, 'utf8').matchAll(/^```python\n([\s\S]*?)^```/gm)].map((m) => m[1])
  if (blocks.length === 0) throw new Error(`${file} has no python block`)
  return blocks
}

describe('the Python client', () => {
  it('has its tools (make deps installs them)', () => {
    expect(existsSync(bin('pytest')), `${venv}: run make deps`).toBe(true)
  })

  it('passes its unit tests (retries, idempotency keys, typed errors, download paths)', async () => {
    const r = await run(bin('pytest'), ['-q', '-p', 'no:cacheprovider', 'tests/unit'])
    expect(r.code, r.out).toBe(0)
    expect(r.out).toMatch(/\d+ passed/)
  }, 60_000)

  it('is formatted (black) and type-checks under mypy --strict, tests included', async () => {
    const black = await run(bin('black'), ['--check', '-q', '.'])
    expect(black.code, black.out).toBe(0)
    const mypy = await run(bin('mypy'), [
      '--strict',
      '--cache-dir',
      join(mypyCache, 'package'),
      'src/dutil_client',
      'tests',
    ])
    expect(mypy.code, mypy.out).toBe(0)
  }, 120_000)

  it('has models generated from docs/openapi.yaml as it is now', async () => {
    const r = await run(bin('python'), ['scripts/generate.py', '--check'])
    expect(r.code, r.out).toBe(0)
  }, 60_000)

  it('installs as a wheel into a fresh environment and types a strict program (Job is no Any)', async () => {
    const dist = join(scratch, 'dist')
    const built = await run(bin('python'), ['-m', 'build', '--wheel', '--no-isolation', '--outdir', dist])
    expect(built.code, built.out).toBe(0)
    const wheel = readdirSync(dist).find((f) => f.endsWith('.whl'))!
    expect(wheel).toMatch(/^dutil_client-\d+\.\d+\.\d+-py3-none-any\.whl$/)
    // Made anew each run, at one place outside the repository (so that mypy's cache of it holds).
    const user = join(venv, '..', 'python-user')
    rmSync(user, { recursive: true, force: true })
    expect((await run('python3', ['-m', 'venv', '--without-pip', user], scratch)).code).toBe(0)
    const install = await run(
      bin('pip'),
      [
        '--python',
        join(user, 'bin', 'python'),
        'install',
        '-q',
        '--disable-pip-version-check',
        '--no-index',
        '--find-links',
        wheels,
        join(dist, wheel),
      ],
      scratch,
    )
    expect(install.code, install.out).toBe(0)
    // The installed distribution says where it comes from (its project URLs).
    const urls = await run(
      join(user, 'bin', 'python'),
      ['-c', 'import importlib.metadata as m; print("\\n".join(m.metadata("dutil-client").get_all("Project-URL")))'],
      scratch,
    )
    expect(urls.out.trim().split('\n')).toEqual([
      expect.stringMatching(/^Homepage, https:\/\/.+\/clients\/python#readme$/),
      expect.stringMatching(/^Source, https:\/\/\S+$/),
      expect.stringMatching(/^Issues, https:\/\/.+\/issues$/),
    ])
    writeFileSync(
      join(scratch, 'main.py'),
      [
        'from dutil_client import Client, Job, JobFailedError, JobStatus, SplitPdfInput, verify_callback',
        '',
        'def main(client: Client) -> JobStatus:',
        '    job: Job = client.run("split-pdf", SplitPdfInput(url="https://example.com/a.pdf"))',
        '    files: int = len(job.result.files) if job.result else 0',
        '    event = verify_callback(b"{}", {}, "whsec_x")',
        '    assert event.data.id and files >= 0',
        '    return job.status',
        '',
        'try:',
        '    main(Client("http://127.0.0.1:1", "du_live_x"))',
        'except JobFailedError as err:',
        '    print(err.job.id)',
        '',
      ].join('\n'),
    )
    // What types would let through if the package's models were Any.
    writeFileSync(
      join(scratch, 'wrong.py'),
      [
        'from dutil_client import Client',
        '',
        'def main(client: Client) -> None:',
        '    count: int = client.get("job_x").status',
        '    client.run("split-pdf-typo", {"url": "https://example.com/a.pdf"})',
        '',
      ].join('\n'),
    )
    const mypy = (file: string) =>
      run(
        bin('mypy'),
        ['--strict', '--python-executable', join(user, 'bin', 'python'), '--cache-dir', join(mypyCache, 'user'), file],
        scratch,
      )
    const good = await mypy('main.py')
    expect(good.code, good.out).toBe(0)
    const wrong = await mypy('wrong.py')
    expect(wrong.code, wrong.out).toBe(1)
    expect(wrong.out).toMatch(/wrong\.py:4: error: Incompatible types in assignment/)
    expect(wrong.out).toMatch(/wrong\.py:5: error: Argument 1 to "run" of "Client" has incompatible type/)
    // The READMEs' examples, each README's blocks in order as one program, after what the prose
    // around them assumes (names it mentions but does not define).
    const examples: Record<string, string[]> = {
      'client_readme.py': [
        'from dutil_client import Job',
        'url = "https://example.com/a.pdf"',
        'base_url, api_key, job_id = "https://dutil.example.com", "du_live_x", "job_x"',
        'request_body_bytes, request_headers = b"{}", {"webhook-id": "job_x"}',
        'other: Job',
        'def handle(job: Job) -> None: ...',
        ...pythonBlocks(join(pkg, 'README.md')),
      ],
      'repository_readme.py': [
        'raw_body, headers = b"{}", {"webhook-id": "job_x"}',
        ...pythonBlocks(join(REPO_ROOT, 'README.md')),
      ],
    }
    for (const [name, lines] of Object.entries(examples)) {
      writeFileSync(join(scratch, name), lines.join('\n') + '\n')
      const checked = await mypy(name)
      expect(checked.code, `${name}\n${checked.out}`).toBe(0)
    }
    // And it runs: the installed package imports in the fresh environment, outside the repository.
    const imported = await run(
      join(user, 'bin', 'python'),
      ['-c', 'import dutil_client; print(dutil_client.__version__)'],
      scratch,
    )
    expect(imported.out.trim()).toBe('0.1.0')
  }, 180_000)
})
