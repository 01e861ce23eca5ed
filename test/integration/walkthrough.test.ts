import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, inject, it, onTestFinished } from 'vitest'
import { writeConfig } from '../../cli/config-file.js'
import { objectNameOf } from '../../contract/ids.js'
import { shellQuote } from '../node-agent/mount-script.js'
import { NAMESPACE, REPO_ROOT, writeKubectl } from '../platform/platform.js'
import { serveSamples } from '../platform/samples.js'
import { fileScratch } from '../support/file-scratch.js'

/** The files this file's tests hand to tools and commands, removed when they end. */
const scratchRoot = fileScratch('dutil-test-walkthrough-')

/**
 * The README's walkthrough, its commands taken from the README itself and run by bash as
 * written. Only what differs between `make dev` and this test platform is swapped: the gateway's
 * and the sample files' addresses, make dev's kubectl and CLI context (this platform's instead),
 * and the walkthrough's placeholders (`du_live_…`, `job_…`, `job-01m9…`) for what the earlier
 * commands printed.
 */
function walkthroughCommands(): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')
  const block = /## Walkthrough \(under `make dev`\)\n+```sh\n([\s\S]*?)\n```/.exec(readme)
  if (!block) throw new Error('README.md has no walkthrough block')
  const commands: string[] = []
  let current = ''
  for (const line of block[1].split('\n')) {
    if (!current && (line.trim() === '' || line.trimStart().startsWith('#'))) continue
    current += (current ? '\n' : '') + line
    if (!line.endsWith('\\')) {
      commands.push(current)
      current = ''
    }
  }
  return commands
}

function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 150_000 }, (err, out, errOut) =>
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, out, err: errOut }),
    )
  })
}

describe("the README's walkthrough", () => {
  it('runs as written: a key, a sync and an async split of the sample PDF, then kubectl get, wait and describe', async () => {
    const commands = walkthroughCommands()
    const samples = await serveSamples(0)
    onTestFinished(() => samples.close())
    const scratch = mkdtempSync(join(scratchRoot, 'dutil-walkthrough-'))
    // make dev's kubectl and CLI context, for this platform.
    const kubectl = join(scratch, 'kubectl')
    writeKubectl(kubectl, inject('kubeconfigPath'))
    const config = join(scratch, 'config.yaml')
    writeConfig(config, {
      currentContext: 'dev',
      contexts: [
        { name: 'dev', url: inject('gatewayUrl'), kubeconfig: inject('kubeconfigPath'), namespace: NAMESPACE },
      ],
    })
    const values = new Map<string, string>()
    const swap = (command: string) => {
      let c = command
        .replaceAll('http://127.0.0.1:8080', inject('gatewayUrl'))
        .replaceAll('http://127.0.0.1:8000', samples.url)
        .replaceAll('.dev/bin/kubectl', kubectl)
      for (const [placeholder, value] of values) c = c.replaceAll(placeholder, value)
      return c
    }
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: scratch, DUTIL_CONFIG: config }
    const outputs: string[] = []
    // One shell for the whole walkthrough (its `export` and variables carry over): each command
    // runs in turn, its output read before the next is swapped.
    let state = ''
    for (const command of commands) {
      const script = `${state}\n${swap(command)}\nrc=$?\n{ declare -p KEY K 2>/dev/null || true; } > ${shellQuote(join(scratch, 'vars'))}\nexit $rc`
      const r = await bash(script, env)
      expect(r.code, `${command}\n${r.out}\n${r.err}`).toBe(0)
      state = readFileSync(join(scratch, 'vars'), 'utf8')
      outputs.push(r.out)
      if (command.includes('keys create')) values.set('du_live_…', JSON.parse(r.out).key)
      const location = /^location: \S*\/v1\/jobs\/(job_\w+)/im.exec(r.out)
      if (location) {
        values.set('job_…', location[1])
        values.set('job-01m9…', objectNameOf(location[1]))
      }
    }
    expect(commands.length).toBeGreaterThanOrEqual(8)
    const at = (needle: string) => outputs[commands.findIndex((c) => c.includes(needle))]
    expect(JSON.parse(at('keys create')).key).toMatch(/^du_live_[0-9a-f]{48}$/)
    expect(JSON.parse(at('/v1/utilities/split-pdf \\'))).toMatchObject({
      status: 'succeeded',
      result: { pageCount: 3 },
    })
    expect(at('/v1/utilities/split-pdf/jobs')).toMatch(/^HTTP\/1\.1 202/)
    const polled = JSON.parse(at('?wait=30'))
    expect(polled).toMatchObject({ id: values.get('job_…'), status: 'succeeded', metadata: { ticket: 'T-1' } })
    expect(at('get utilityjobs')).toContain(values.get('job_…'))
    expect(at('$K wait')).toContain(`utilityjob.dutil.io/${values.get('job-01m9…')} condition met`)
    expect(at('$K describe')).toMatch(
      /Normal\s+Succeeded\s+\S+\s+dutil\.io\/operator\s+Succeeded in \d+ ms: 3 files stored\./,
    )
  }, 300_000)
})
