import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { build } from 'esbuild'
import { parse } from 'yaml'
import { bundledPackages } from '../../cli/notices.js'
import { REPO_ROOT } from '../platform/platform.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'

/**
 * The CLI as its users get it: `npm pack` of the bundled package (dist/cli-package), installed
 * with `npm install -g` into a prefix outside this repository, run from there with nothing but a
 * config file: a context made with `config set-context`, a key made through its kubeconfig, a
 * job run with `-o yaml`, and bash completing from the installed command.
 */
const scratch = mkdtempSync(join(tmpdir(), 'dutil-cli-user-'))
const prefix = join(scratch, 'prefix')
const home = join(scratch, 'home')
let files: FileServer

beforeAll(async () => {
  files = await new FileServer().start()
  files.add('packed.pdf', await makePdf(2))
  mkdirSync(home)
  const pkg = join(REPO_ROOT, 'dist', 'cli-package')
  expect(existsSync(join(pkg, 'dutil.mjs')), 'build first (npm run build)').toBe(true)
  const npmEnv = { ...process.env, npm_config_update_notifier: 'false' }
  execFileSync('npm', ['pack', '--silent', '--pack-destination', scratch, pkg], { env: npmEnv, stdio: 'pipe' })
  const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'))!
  execFileSync(
    'npm',
    ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--offline', join(scratch, tarball)],
    { env: npmEnv, stdio: 'pipe', cwd: scratch },
  )
})
afterAll(async () => {
  await files.stop()
  rmSync(scratch, { recursive: true, force: true })
})

/** The installed command, with a clean environment: no DUTIL_* variables, no KUBECONFIG, HOME in scratch. */
function dutil(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      join(prefix, 'bin', 'dutil'),
      args,
      {
        cwd: scratch,
        env: { PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, HOME: home },
        timeout: 90_000,
      },
      (err, out, errOut) =>
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, out, err: errOut }),
    )
  })
}

describe('the packed CLI, installed with npm install -g', () => {
  it('works from a config file: context, key, a job in YAML, listing, completion', async () => {
    const version = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version
    expect((await dutil('--version')).out.trim()).toBe(`dutil ${version}`)

    const noKey = await dutil('jobs', 'list')
    expect(noKey.code).toBe(2)
    expect(noKey.err).toContain('no API key')

    const set = await dutil(
      'config',
      'set-context',
      'local',
      '--url',
      inject('gatewayUrl'),
      '--kubeconfig',
      inject('kubeconfigPath'),
      '-n',
      'dutil',
    )
    expect(set.code, set.err).toBe(0)
    const file = join(home, '.config', 'dutil', 'config.yaml')
    expect(statSync(file).mode & 0o777).toBe(0o600)

    const created = await dutil('keys', 'create', '--name', 'packed-cli', '-o', 'json')
    expect(created.code, created.err).toBe(0)
    const { id: keyId, key } = JSON.parse(created.out)
    expect((await dutil('config', 'set-context', 'local', '--api-key', key)).code).toBe(0)
    expect(readFileSync(file, 'utf8')).toContain(key)
    expect((await dutil('config', 'view')).out).not.toContain(key)

    const run = await dutil('run', 'split-pdf', '--url', `${files.url}/files/packed.pdf`, '--wait', '-o', 'yaml')
    expect(run.code, run.err).toBe(0)
    const job = parse(run.out)
    expect(job).toMatchObject({ status: 'succeeded', utility: 'split-pdf', result: { pageCount: 2 } })

    const listed = await dutil('jobs', 'list', '-o', 'wide')
    expect(listed.out.split('\n')[1]).toMatch(new RegExp(`^${job.id}\\s+split-pdf\\s+async\\s+succeeded\\s+-\\s+2\\s+`))
    const keys = parse((await dutil('keys', 'list', '-o', 'yaml')).out) as Array<{ id: string; name: string }>
    expect(keys.find((k) => k.id === keyId)).toMatchObject({ name: 'packed-cli' })

    // A document on this computer: uploaded by the run, the result downloaded beside it.
    writeFileSync(join(scratch, 'local report.pdf'), await makePdf(3))
    const local = await dutil('run', 'split-pdf', 'local report.pdf', '--out', 'pages')
    expect(local.code, local.err).toBe(0)
    expect(local.err).toMatch(/^uploaded local report\.pdf \(\d+(\.\d)? KB\) as file_[0-9A-Z]{26}$/m)
    expect(readdirSync(join(scratch, 'pages')).sort()).toEqual(['page-001.pdf', 'page-002.pdf', 'page-003.pdf'])
    const uploaded = parse((await dutil('files', 'list', '-o', 'yaml')).out) as Array<{ name: string }>
    expect(uploaded.map((f) => f.name)).toContain('local report.pdf')

    const completion = execFileSync(
      'bash',
      ['-c', 'source <(dutil completion bash); COMP_WORDS=(dutil run s); COMP_CWORD=2; _dutil; echo "${COMPREPLY[*]}"'],
      { env: { PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, HOME: home }, encoding: 'utf8' },
    )
    expect(completion.trim()).toBe('split-pdf')
  })

  it('ships its licence and the licence of every package bundled into it, and names its repository', async () => {
    const installed = join(prefix, 'lib', 'node_modules', '@dutil', 'cli')
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toBe(readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8'))
    // It says where it comes from: the project's repository (its cli folder) and issue tracker.
    const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'))
    expect(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))).toMatchObject({
      repository: { ...root.repository, directory: 'cli' },
      homepage: root.homepage.replace(/#readme$/, '/tree/main/cli#readme'),
      bugs: root.bugs,
    })
    const notices = readFileSync(join(installed, 'THIRD-PARTY-NOTICES.md'), 'utf8')
    // What is in the bundle, found again here: esbuild's own account of the CLI's inputs.
    const { metafile } = await build({
      entryPoints: [join(REPO_ROOT, 'cli', 'main.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      write: false,
      metafile: true,
      absWorkingDir: REPO_ROOT,
      define: { __DUTIL_VERSION__: '"0"' },
      logLevel: 'silent',
    })
    const packages = bundledPackages(Object.keys(metafile.inputs), REPO_ROOT)
    expect(packages.map((p) => p.name)).toContain('commander')
    for (const p of packages) {
      expect(notices, p.name).toContain(`## ${p.name} ${p.version} (${p.license})`)
      for (const t of p.texts) expect(notices, `${p.name} ${t.file}`).toContain(t.text)
    }
  })
})
