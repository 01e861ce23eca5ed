import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ulid } from 'ulid'
import { catalog } from '../../runners/catalog.js'
import { inputObjectKey } from '../../contract/runner-protocol.js'
import { storageClient, writeJsonObject } from '../../platform/storage-client.js'
import { runnerNodeArgs } from '../../operator/desired-job.js'
import { FileServer } from '../support/file-server.js'
import { makePdf } from '../support/pdfs.js'
import { runnerJobEnv } from '../support/runner-harness.js'
import { offsetPorts, REPO_ROOT, startPlatform, TEST_PORTS } from '../platform/platform.js'
import { benchPage, benchWorkbook, textFile } from './bench-inputs.js'

/**
 * `make bench-memory-limits`: each runner image under a real cgroup memory limit, as a pod runs
 * it: Docker's engine starts the image with the Job's command (`node --max-old-space-size=<n>
 * <entry>`), `--memory` equal to the runner's default limit (the catalog's
 * `runner.resources.limits.memory`, which the chart uses unless told otherwise), a read-only root
 * file system, a disk-backed /tmp as scratch (the Job's emptyDir) and the runner's user. Its peak memory is the cgroup's own
 * high-water mark (memory.max_usage_in_bytes, cgroup v1: page cache included, as the kernel
 * counts it against the limit). Then the same runner with a limit below what it needs: the kernel
 * kills it (OOMKilled), which the operator reports as upstream_error naming the limit
 * (operator/observe-job.ts; the real-node tier tests that path end to end).
 *
 * Its own MinIO and control plane on TEST_PORTS + 500 (nothing else of the platform runs), input
 * files on a loopback server (the runners are allowed loopback here, as under `make dev`).
 * DUTIL_IMAGE_TAG names the images (make bench-memory-limits builds them).
 */
const tag = process.env.DUTIL_IMAGE_TAG
if (!tag) throw new Error('DUTIL_IMAGE_TAG names the runner images (make bench-memory-limits sets it)')
const docker = process.env.DOCKER ?? 'docker'

const MI = 1024 ** 2
const quantityBytes = (q: string) => {
  const m = /^(\d+)(Mi|Gi)$/.exec(q)
  if (!m) throw new Error(`unexpected memory quantity ${q}`)
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 * MI : MI)
}

const say = (m: string) => process.stderr.write(`[bench] ${m}\n`)
const platform = await startPlatform({
  dir: join(REPO_ROOT, '.bench-memory'),
  ports: offsetPorts(TEST_PORTS, 500),
  fresh: true,
  nodeAgent: false,
  programs: false,
  allowLoopbackUrls: true,
  testHooks: false,
  progress: say,
})
const files = await new FileServer().start()
const s3 = storageClient(platform.storage)

interface Outcome {
  exitCode: number
  oomKilled: boolean
  peakBytes: number
  ms: number
}

/** Runs one runner image with a memory limit; samples the container's cgroup high-water mark. */
async function runInContainer(slug: string, input: unknown, limitBytes: number): Promise<Outcome> {
  const u = catalog.get(slug)!
  const jobId = `job_${ulid()}`
  const scratch = join(REPO_ROOT, '.bench-memory', 'scratch', jobId)
  mkdirSync(scratch, { recursive: true })
  chmodSync(scratch, 0o1777)
  await writeJsonObject(s3, platform.storage.bucket, inputObjectKey(jobId), input)
  const env = runnerJobEnv(jobId, slug, platform.storage, true)
  const args = [
    'run',
    '-d',
    '--network',
    'host',
    '--memory',
    String(limitBytes),
    '--memory-swap',
    String(limitBytes),
    // /tmp as the pod has it: a disk-backed emptyDir (a tmpfs would charge its pages to the limit).
    '--read-only',
    '-v',
    `${scratch}:/tmp`,
    '-e',
    'TMPDIR=/tmp',
    '-e',
    'HOME=/tmp',
    '--user',
    '10001:10001',
    '--entrypoint',
    'node',
    ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    `ghcr.io/dutil/${u.runner.image}:${tag}`,
    ...runnerNodeArgs(u),
    `/app/${u.runner.entry}`,
  ]
  const t0 = performance.now()
  const id = execFileSync(docker, args, { encoding: 'utf8' }).trim()
  const usage = `/sys/fs/cgroup/memory/docker/${id}/memory.max_usage_in_bytes`
  let peakBytes = 0
  const sample = () => {
    try {
      peakBytes = Math.max(peakBytes, Number(readFileSync(usage, 'utf8')))
    } catch {
      // Gone: the container has exited.
    }
  }
  for (;;) {
    sample()
    const running =
      execFileSync(docker, ['inspect', '-f', '{{.State.Running}}', id], { encoding: 'utf8' }).trim() === 'true'
    if (!running) break
    await new Promise((r) => setTimeout(r, 25))
  }
  const ms = performance.now() - t0
  const [exitCode, oomKilled] = execFileSync(
    docker,
    ['inspect', '-f', '{{.State.ExitCode}} {{.State.OOMKilled}}', id],
    { encoding: 'utf8' },
  )
    .trim()
    .split(' ')
  if (!existsSync(usage) && peakBytes === 0) say(`${slug}: no cgroup sample (exited at once?)`)
  const logs = spawnSync(docker, ['logs', '--tail', '5', id], { encoding: 'utf8' })
  execFileSync(docker, ['rm', '-f', id], { stdio: 'ignore' })
  rmSync(scratch, { recursive: true, force: true })
  const out: Outcome = { exitCode: Number(exitCode), oomKilled: oomKilled === 'true', peakBytes, ms }
  if (out.exitCode !== 0 && !out.oomKilled)
    say(`${slug} exited ${exitCode}: ${(logs.stdout + logs.stderr).slice(-800)}`)
  return out
}

const cases: Array<{ slug: string; input: string; make: () => Promise<unknown>; tight: string }> = [
  {
    slug: 'split-pdf',
    input: '500 pages',
    make: async () => ({ url: files.add('m.pdf', await makePdf(500)) }),
    tight: '24Mi',
  },
  {
    slug: 'zip-files',
    input: '100 files, 200 MB',
    make: async () => ({
      files: Array.from({ length: 100 }, (_, i) => ({
        url: files.add(`z${i}.log`, textFile(i, 2 * MI), 'text/plain'),
        fileName: `logs/z${i}.log`,
      })),
    }),
    tight: '16Mi',
  },
  {
    slug: 'unzip-files',
    input: '500 entries, ~50 MB unpacked',
    make: async () => {
      const dir = join(REPO_ROOT, '.bench-memory', 'unzip')
      mkdirSync(join(dir, 'in'), { recursive: true })
      for (let i = 0; i < 500; i++) writeFileSync(join(dir, 'in', `f${i}.log`), textFile(i, 100_000))
      execFileSync('zip', ['-q', '-r', '../in.zip', '.'], { cwd: join(dir, 'in') })
      return { url: files.add('m.zip', readFileSync(join(dir, 'in.zip')), 'application/zip') }
    },
    tight: '16Mi',
  },
  {
    slug: 'xls-to-xlsx',
    input: '4 sheets × 5,000 rows',
    make: async () => ({ url: files.add('m.xls', benchWorkbook(), 'application/vnd.ms-excel') }),
    tight: '40Mi',
  },
  {
    slug: 'html-pdf',
    input: 'report, 400-row table',
    make: async () => ({ url: files.add('report.html', benchPage(), 'text/html') }),
    tight: '128Mi',
  },
]

const rows = [
  '| runner | input | limit (default) | peak (cgroup) | share of limit | time | outcome | below need: limit → outcome |',
  '|---|---|---|---|---|---|---|---|',
]
try {
  for (const c of cases) {
    const u = catalog.get(c.slug)!
    const limit = u.runner.resources.limits.memory
    say(`${c.slug}: ${c.input} at ${limit}`)
    const input = await c.make()
    const fit = await runInContainer(c.slug, input, quantityBytes(limit))
    const tight = await runInContainer(c.slug, input, quantityBytes(c.tight))
    const verdict = (o: Outcome) =>
      o.exitCode === 0
        ? 'succeeded'
        : o.oomKilled
          ? 'OOM-killed (upstream_error naming the limit)'
          : `exit ${o.exitCode}`
    rows.push(
      `| ${c.slug} | ${c.input} | ${limit} | ${(fit.peakBytes / MI).toFixed(0)} MB | ${((100 * fit.peakBytes) / quantityBytes(limit)).toFixed(0)} % | ${(fit.ms / 1000).toFixed(2)} s | ${verdict(fit)} | ${c.tight} → ${verdict(tight)} |`,
    )
  }
} finally {
  await files.stop()
  await platform.stop()
}
process.stdout.write(
  `Runner images under a cgroup memory limit (Docker --memory = the runner's default limit; peak = memory.max_usage_in_bytes)\n\n${rows.join('\n')}\n`,
)
