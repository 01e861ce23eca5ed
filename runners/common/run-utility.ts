import { writeFileSync } from 'node:fs'
import type { Client } from 'minio'
import pino, { type Logger } from 'pino'
import { inputObjectKey, resultObjectKey, type RunnerFailure, type RunnerResult, type StoredFile } from '../../contract/runner-protocol.js'
import { outputKey } from '../../contract/storage-keys.js'
import { readJsonObject, storageClient, writeJsonObject } from '../../contract/storage-client.js'
import { isoMs } from '../../contract/time.js'
import { loadRunnerConfig, type RunnerConfig } from './runner-config.js'
import { RunnerError } from './runner-error.js'

export interface RunContext<I> {
  config: RunnerConfig
  input: I
  storage: Client
  log: Logger
  /** Stores one output file under the job's key prefix; time spent here counts as storageMs. */
  store(file: string, body: Buffer, contentType: string, extra?: Pick<StoredFile, 'pageNumber' | 'path'>): Promise<StoredFile>
}

export interface UtilityOutcome {
  files: StoredFile[]
  extras?: Record<string, number | string>
}

/**
 * The runner program's frame: read config and input, run the utility, store the result
 * manifest, and turn failures into a termination message plus an exit code the Job's pod
 * failure policy understands.
 */
export async function runUtility<I>(handler: (ctx: RunContext<I>) => Promise<UtilityOutcome>): Promise<never> {
  const log = pino({ base: { component: 'runner' } })
  let config: RunnerConfig | undefined
  try {
    config = loadRunnerConfig()
    const cfg = config
    const startedAt = Date.now()
    const storage = storageClient(cfg.storage)
    const child = log.child({ jobId: cfg.jobId, utility: cfg.utility })
    const input = await readJsonObject<I>(storage, cfg.storage.bucket, inputObjectKey(cfg.jobId))
    child.info('runner started')
    let storageMs = 0
    const store: RunContext<I>['store'] = async (file, body, contentType, extra) => {
      const key = outputKey(cfg.utility, cfg.createdAtMs, cfg.jobId, file)
      const t0 = Date.now()
      try {
        await storage.putObject(cfg.storage.bucket, key, body, body.length, { 'Content-Type': contentType })
      } catch (err) {
        child.error({ err, key }, 'storing output failed')
        throw new RunnerError('storage_error', 'Copying the output to storage failed.')
      } finally {
        storageMs += Date.now() - t0
      }
      return { key, name: file, size: body.length, contentType, ...extra }
    }
    const outcome = await handler({ config: cfg, input, storage, log: child, store })
    const result: RunnerResult = {
      files: outcome.files,
      extras: outcome.extras ?? {},
      startedAt: isoMs(startedAt),
      upstreamMs: Math.max(0, Date.now() - startedAt - storageMs),
      storageMs,
    }
    try {
      await writeJsonObject(storage, cfg.storage.bucket, resultObjectKey(cfg.jobId), result)
    } catch (err) {
      child.error({ err }, 'storing result manifest failed')
      throw new RunnerError('storage_error', 'Copying the output to storage failed.')
    }
    child.info({ files: result.files.length, upstreamMs: result.upstreamMs, storageMs }, 'runner succeeded')
    process.exit(0)
  } catch (err) {
    const classified = err instanceof RunnerError
    const failure: RunnerFailure = classified ? err.toFailure() : { code: 'upstream_error', message: 'The utility failed unexpectedly.' }
    log.error({ err, failure }, classified ? 'runner rejected the job' : 'runner crashed')
    try {
      writeFileSync(config?.terminationMessagePath ?? '/dev/termination-log', JSON.stringify(failure))
    } catch {
      // No termination log (run outside a pod): the exit code still tells the story.
    }
    process.exit(classified ? err.exitCode : 1)
  }
}
