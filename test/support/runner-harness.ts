import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ulid } from 'ulid'
import { catalog } from '../../runners/catalog.js'
import {
  ENV,
  inputObjectKey,
  MAX_RESULT_MANIFEST_BYTES,
  resultObjectKey,
  type RunnerFailure,
  type RunnerResult,
} from '../../contract/runner-protocol.js'
import type { StorageSettings } from '../../contract/storage-keys.js'
import { readJsonObject, storageClient, writeJsonObject } from '../../platform/storage-client.js'
import { runnerNodeArgs } from '../../operator/desired-job.js'
import { REPO_ROOT } from '../platform/platform.js'

export interface HarnessRun {
  exitCode: number
  wallMs: number
  /** Peak resident set size of the runner process, from wait4's rusage (GNU time). */
  peakRssKb: number
  result?: RunnerResult
  failure?: RunnerFailure
  log: string
}

/**
 * The runner's environment contract for one job (contract/runner-protocol.ts ENV), with the
 * given storage credentials where a pod gets its job's temporary ones.
 */
export function runnerJobEnv(
  jobId: string,
  slug: string,
  storage: StorageSettings,
  allowLoopback: boolean,
): Record<string, string> {
  return {
    [ENV.jobId]: jobId,
    [ENV.utility]: slug,
    [ENV.createdAt]: new Date().toISOString(),
    [ENV.endpoint]: storage.endpoint,
    [ENV.region]: storage.region,
    [ENV.bucket]: storage.bucket,
    [ENV.accessKey]: storage.accessKey,
    [ENV.secretKey]: storage.secretKey,
    [ENV.allowLoopback]: String(allowLoopback),
  }
}

/**
 * Runs a runner program the way its pod does (same entry, same V8 heap cap, same environment
 * contract), but as a direct child process: for benchmarks and quick checks without the
 * Kubernetes path. Its input goes to storage first, like the gateway writes it.
 */
export async function runRunner(
  slug: string,
  input: unknown,
  storage: StorageSettings,
  opts: {
    allowLoopback?: boolean
    env?: Record<string, string>
    /** Extra node flags, e.g. --cpu-prof (not allowed in NODE_OPTIONS). */ nodeArgs?: string[]
  } = {},
): Promise<HarnessRun> {
  const utility = catalog.get(slug)
  if (!utility) throw new Error(`unknown utility ${slug}`)
  const jobId = `job_${ulid()}`
  const s3 = storageClient(storage)
  await writeJsonObject(s3, storage.bucket, inputObjectKey(jobId), input)
  const dir = mkdtempSync(join(tmpdir(), 'dutil-harness-'))
  const termination = join(dir, 'termination-log')
  const timeFile = join(dir, 'time')
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dir,
    TMPDIR: dir,
    ...runnerJobEnv(jobId, slug, storage, opts.allowLoopback ?? true),
    DUTIL_TERMINATION_MESSAGE_PATH: termination,
    // The browser html-pdf drives, when the caller names another (an image sets it the same way).
    ...(process.env.DUTIL_CHROMIUM_PATH ? { DUTIL_CHROMIUM_PATH: process.env.DUTIL_CHROMIUM_PATH } : {}),
    ...(opts.env ?? {}),
  }
  const args = [
    '-f',
    '%M',
    '-o',
    timeFile,
    process.execPath,
    ...runnerNodeArgs(utility),
    ...(opts.nodeArgs ?? []),
    join(REPO_ROOT, utility.runner.entry),
  ]
  const t0 = performance.now()
  const child = spawn('/usr/bin/time', args, { env, cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  child.stdout.on('data', (d) => (log += d))
  child.stderr.on('data', (d) => (log += d))
  const exitCode: number = await new Promise((r) => child.on('close', (code) => r(code ?? 1)))
  const wallMs = performance.now() - t0
  const peakRssKb = Number(readFileSync(timeFile, 'utf8').trim().split('\n').pop())
  const run: HarnessRun = { exitCode, wallMs, peakRssKb, log }
  if (exitCode === 0)
    run.result = await readJsonObject<RunnerResult>(
      s3,
      storage.bucket,
      resultObjectKey(jobId),
      MAX_RESULT_MANIFEST_BYTES,
    )
  else {
    try {
      run.failure = JSON.parse(readFileSync(termination, 'utf8'))
    } catch {
      // crashed before writing one
    }
  }
  rmSync(dir, { recursive: true, force: true })
  return run
}
