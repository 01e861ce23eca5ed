import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

/**
 * The package as a user gets it: `npm pack`, installed into a project outside this repository,
 * and a strict program compiled against it. A line that only compiles if the published types
 * degraded to `any` must fail to compile (its @ts-expect-error would then be unused).
 */
const here = dirname(fileURLToPath(import.meta.url))
const pkg = join(here, '..')
const tsc = join(pkg, 'node_modules', '.bin', 'tsc')
const scratch = mkdtempSync(join(tmpdir(), 'dutil-client-user-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
  })

describe('the packed TypeScript client', () => {
  it('installs outside the repository and types a strict program: Job, InputOf and the client are real types, not any', () => {
    expect(existsSync(join(pkg, 'dist', 'index.d.ts')), 'build the client first (npm run build)').toBe(true)
    run('npm', ['pack', '--silent', '--pack-destination', scratch], pkg)
    const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'))!
    writeFileSync(
      join(scratch, 'package.json'),
      JSON.stringify({ name: 'user-project', private: true, type: 'module' }),
    )
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${tarball}`, '@types/node@20'], scratch)
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        include: ['main.ts'],
      }),
    )
    writeFileSync(
      join(scratch, 'main.ts'),
      [
        "import { DutilClient, verifyCallback, type InputOf, type Job, type JobStatus } from '@dutil/client'",
        "const client = new DutilClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'du_live_' })",
        "const input: InputOf<'split-pdf'> = { url: 'https://example.com/a.pdf' }",
        'export async function main(): Promise<JobStatus> {',
        "  const job: Job = await client.run('split-pdf', input)",
        '  const files: number = job.result?.files.length ?? 0',
        "  verifyCallback('{}', {}, 'whsec_x')",
        '  // @ts-expect-error the status is a union of strings, never a number (this fails if Job were any)',
        '  const wrong: number = job.status',
        '  // @ts-expect-error split-pdf takes a url, not files',
        "  await client.submit('split-pdf', { files: [] })",
        '  return files > wrong ? job.status : job.status',
        '}',
      ].join('\n'),
    )
    const compiled = (() => {
      try {
        return { ok: true, out: run(tsc, ['-p', 'tsconfig.json'], scratch) }
      } catch (err) {
        return {
          ok: false,
          out: `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}`,
        }
      }
    })()
    expect(compiled.out).toBe('')
    expect(compiled.ok).toBe(true)
  }, 120_000)

  it('builds on its own, from a copy of its folder with nothing of the repository around it', () => {
    const copy = join(scratch, 'client-copy')
    for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'src'])
      cpSync(join(pkg, f), join(copy, f), { recursive: true })
    run('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], copy)
    run('npm', ['run', '--silent', 'build'], copy)
    expect(
      readdirSync(join(copy, 'dist'))
        .filter((f) => f.endsWith('.d.ts'))
        .sort(),
    ).toEqual(['errors.d.ts', 'index.d.ts', 'schema.d.ts'])
  }, 120_000)
})
