import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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
const scratch = mkdtempSync(join(tmpdir(), 'dutil-client-user-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/**
 * A command's output. Asynchronous: an install or a compile can take a minute on a busy machine,
 * and a test worker whose event loop is blocked that long misses vitest's own calls (a
 * "Timeout calling onTaskUpdate" error fails the whole run).
 */
const run = async (cmd: string, args: string[], cwd: string): Promise<string> =>
  (
    await promisify(execFile)(cmd, args, {
      cwd,
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    })
  ).stdout

/**
 * The TypeScript versions a user may compile with: the newest the registry serves today (what
 * `npm install typescript` gives) and the oldest the package supports for ES modules (5.0; a
 * CommonJS project imports it through Node's require of ES modules, which TypeScript types from
 * 5.8 on).
 */
const TYPESCRIPTS = { newest: 'typescript@latest', oldest: 'typescript-oldest@npm:typescript@5.0.4' }

const PROGRAM = [
  "import { DutilClient, verifyCallback, type InputOf, type Job, type JobStatus } from '@dutil/client'",
  "const client = new DutilClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'du_live_' })",
  "const input: InputOf<'split-pdf'> = { url: 'https://example.com/a.pdf' }",
  'export async function main(): Promise<JobStatus> {',
  "  const job: Job = await client.run('split-pdf', input)",
  '  const files: number = job.result?.files.length ?? 0',
  "  verifyCallback('{}', {}, 'whsec_x')",
  "  verifyCallback(new TextEncoder().encode('{}'), new Headers(), 'whsec_x')",
  '  // @ts-expect-error the status is a union of strings, never a number (this fails if Job were any)',
  '  const wrong: number = job.status',
  '  // @ts-expect-error split-pdf takes a url, not files',
  "  await client.submit('split-pdf', { files: [] })",
  '  return files > wrong ? job.status : job.status',
  '}',
].join('\n')

/** A strict ES module project's tsconfig.json (no output), with these type packages and files. */
function strictTsconfig(o: { skipLibCheck: boolean; types: string[] }, include: string[]): string {
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
  }
  return JSON.stringify({ compilerOptions: { ...compilerOptions, ...o }, include })
}

/** The code blocks of a Markdown file in one language, in order (each one text). */
function codeBlocks(file: string, lang: string): string[] {
  const text = readFileSync(file, 'utf8')
  const blocks = [...text.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```', 'gm'))].map((m) => m[1])
  if (blocks.length === 0) throw new Error(`${file} has no ${lang} block`)
  return blocks
}

/** Compiles the strict program in `dir` with the tsc at `tscPath`: its output, empty when it compiles. */
async function compile(tscPath: string, dir: string): Promise<{ ok: boolean; out: string }> {
  try {
    return { ok: true, out: await run(process.execPath, [tscPath, '-p', 'tsconfig.json'], dir) }
  } catch (err) {
    return {
      ok: false,
      out: `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}`,
    }
  }
}

describe('the packed TypeScript client', () => {
  it('installs outside the repository and types a strict program without @types/node, with the newest and the oldest TypeScript, as an ES module and as CommonJS', async () => {
    expect(existsSync(join(pkg, 'dist', 'index.d.ts')), 'build the client first (npm run build)').toBe(true)
    await run('npm', ['pack', '--silent', '--pack-destination', scratch], pkg)
    const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'))!
    // The licence travels with the package.
    expect((await run('tar', ['-tzf', tarball], scratch)).split('\n')).toContain('package/LICENSE')
    // And says where it comes from: the repository's folder of it and the project's issue tracker.
    const packed = JSON.parse(await run('tar', ['-xOzf', tarball, 'package/package.json'], scratch)) as Record<
      string,
      unknown
    >
    expect(packed).toMatchObject({
      repository: {
        type: 'git',
        url: expect.stringMatching(/^git\+https:\/\/.+\.git$/),
        directory: 'clients/typescript',
      },
      homepage: expect.stringMatching(/^https:\/\/.+\/clients\/typescript#readme$/),
      bugs: { url: expect.stringMatching(/^https:\/\/.+\/issues$/) },
    })
    writeFileSync(
      join(scratch, 'package.json'),
      JSON.stringify({ name: 'user-project', private: true, type: 'module' }),
    )
    // No @types/node: the package's public types must stand without it.
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        `./${tarball}`,
        TYPESCRIPTS.newest,
        TYPESCRIPTS.oldest,
      ],
      scratch,
    )
    const tsconfig = strictTsconfig({ skipLibCheck: false, types: [] }, ['main.ts'])
    writeFileSync(join(scratch, 'tsconfig.json'), tsconfig)
    writeFileSync(join(scratch, 'main.ts'), PROGRAM)
    // The same program in a CommonJS project beside it (its packages from the one above).
    const cjs = join(scratch, 'cjs-user')
    mkdirSync(cjs)
    writeFileSync(join(cjs, 'package.json'), JSON.stringify({ name: 'cjs-user', private: true, type: 'commonjs' }))
    writeFileSync(join(cjs, 'tsconfig.json'), tsconfig)
    writeFileSync(join(cjs, 'main.ts'), PROGRAM)
    const newest = join(scratch, 'node_modules', 'typescript', 'bin', 'tsc')
    const oldest = join(scratch, 'node_modules', 'typescript-oldest', 'bin', 'tsc')
    expect(await run(process.execPath, [newest, '--version'], scratch)).toMatch(/^Version (\d+)\./)
    for (const [what, tscPath, dir] of [
      ['ES module, newest TypeScript', newest, scratch],
      ['ES module, TypeScript 5.0', oldest, scratch],
      ['CommonJS, newest TypeScript', newest, cjs],
    ] as const) {
      const compiled = await compile(tscPath, dir)
      expect(compiled.out, what).toBe('')
      expect(compiled.ok, what).toBe(true)
    }
  }, 180_000)

  it('types the examples of its README and of the repository README in a strict project (with @types/node, as a Node program has)', async () => {
    // After the test above, which installed the packed client into `scratch`.
    expect(existsSync(join(scratch, 'node_modules', '@dutil', 'client')), 'the packed client is installed').toBe(true)
    const examples = join(scratch, 'examples')
    mkdirSync(examples, { recursive: true })
    writeFileSync(join(examples, 'package.json'), JSON.stringify({ name: 'examples', private: true, type: 'module' }))
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '@types/node@22'], examples)
    // What the prose around each README's examples assumes (names it mentions but does not define).
    const files = {
      'client-readme.ts': [
        "import { writeFile } from 'node:fs/promises'",
        "import http from 'node:http'",
        'declare const url: string',
        'declare const queuedJobId: string',
        ...codeBlocks(join(pkg, 'README.md'), 'ts'),
      ],
      'repository-readme.ts': [
        "import type { IncomingMessage } from 'node:http'",
        'declare const rawBody: string',
        'declare const req: IncomingMessage',
        ...codeBlocks(join(pkg, '..', '..', 'README.md'), 'ts'),
      ],
    }
    for (const [name, lines] of Object.entries(files)) writeFileSync(join(examples, name), lines.join('\n'))
    writeFileSync(
      join(examples, 'tsconfig.json'),
      strictTsconfig({ skipLibCheck: true, types: ['node'] }, Object.keys(files)),
    )
    const compiled = await compile(join(scratch, 'node_modules', 'typescript', 'bin', 'tsc'), examples)
    expect(compiled.out).toBe('')
    expect(compiled.ok).toBe(true)
  }, 120_000)

  it('builds on its own, from a copy of its folder with nothing of the repository around it', async () => {
    const copy = join(scratch, 'client-copy')
    for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'src', 'LICENSE', 'README.md'])
      cpSync(join(pkg, f), join(copy, f), { recursive: true })
    // `prepare` builds it on install (as from a checkout), so a pack from there is never empty.
    await run('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], copy)
    expect(
      readdirSync(join(copy, 'dist'))
        .filter((f) => f.endsWith('.d.ts'))
        .sort(),
    ).toEqual(['errors.d.ts', 'index.d.ts', 'schema.d.ts'])
    const packed = join(scratch, 'copy-pack')
    mkdirSync(packed)
    await run('npm', ['pack', '--silent', '--pack-destination', packed], copy)
    const listed = (await run('tar', ['-tzf', readdirSync(packed)[0]], packed)).split('\n')
    expect(listed).toEqual(
      expect.arrayContaining(['package/dist/index.js', 'package/dist/index.d.ts', 'package/LICENSE']),
    )
  }, 120_000)
})
