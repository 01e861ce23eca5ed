import { writeFileSync } from 'node:fs'
import pino, { type Logger } from 'pino'
import {
  inputObjectKey,
  POOL,
  progressObjectKey,
  resultObjectKey,
  type RunnerFailure,
  type RunnerResult,
  type StoredFile,
} from '../../contract/runner-protocol.js'
import { outputKey } from '../../contract/storage-keys.js'
import { isoMs } from '../../contract/time.js'
import type * as Tracing from '../../platform/tracing.js'
import { openDocument, openInput } from '../../platform/sealed-input.js'
import { type ObjectStore, readJson, s3ObjectStore, writeJson } from './object-store.js'
import { ProgressReporter } from './progress-reporter.js'
import { loadRunnerConfig, type RunnerConfig } from './runner-config.js'
import { RunnerError } from './runner-error.js'
import { StorageWriteError, uploadStream } from './stream-upload.js'

type FileExtra = Pick<StoredFile, 'pageNumber' | 'path'>

export interface RunContext<I> {
  config: RunnerConfig
  input: I
  /** dutil's bucket, for s3:// inputs. */
  storage: ObjectStore
  log: Logger
  /** Stores one output file under the job's key prefix; time spent here counts as storageMs. */
  store(file: string, body: Buffer, contentType: string, extra?: FileExtra): Promise<StoredFile>
  /**
   * Streams one output file of unknown length to storage with bounded memory (see
   * uploadStream); the source is read only as fast as storage accepts it.
   */
  storeStream(
    file: string,
    source: AsyncIterable<Uint8Array>,
    contentType: string,
    extra?: FileExtra,
    opts?: { large?: boolean },
  ): Promise<StoredFile>
  /**
   * How far the run has got, in the utility's `runner.progressUnit`: call it as often as is
   * natural (per page, per entry); storage sees at most one write a second.
   */
  progress(done: number, total: number | null): void
}

/** What a utility does with one job: the same function in job mode and in pool mode. */
export type UtilityHandler<I> = (ctx: RunContext<I>) => Promise<UtilityOutcome>

/** Least time between two progress writes of a runner. */
export const PROGRESS_INTERVAL_MS = 1000

export interface UtilityOutcome {
  files: StoredFile[]
  extras?: Record<string, number | string | boolean>
}

const baseName = (file: string) => file.slice(file.lastIndexOf('/') + 1)

/** How one job's run ended: its result manifest stored, or a failure for the operator. */
export type JobOutcome =
  /** `result`: the manifest, when the run answers it rather than storing it (RunnerConfig.answerResult). */
  { ok: true; result?: RunnerResult } | { ok: false; failure: RunnerFailure; exitCode: number }

/**
 * The runner program's frame: read config from the environment, run the one job, and turn the
 * outcome into a termination message plus an exit code the Job's pod failure policy
 * understands. This is the one place that maps outcomes to exit codes.
 */
export async function runUtility<I>(handler: (ctx: RunContext<I>) => Promise<UtilityOutcome>): Promise<never> {
  const log = pino({ base: { component: 'runner' } })
  let config: RunnerConfig | undefined
  let stopTracing = async () => {}
  let outcome: JobOutcome
  try {
    config = loadRunnerConfig()
    // Tracing is loaded only for a traced job: an untraced runner starts as fast as before.
    let tracing: typeof Tracing | undefined
    if (config.tracing) {
      tracing = await import('../../platform/tracing.js')
      const { endpoint, serviceName } = config.tracing
      stopTracing = await tracing.startTracing({ endpoint, sampleRatio: 1, serviceName })
    }
    outcome = await runJob(config, handler, log, tracing)
  } catch (err) {
    // The configuration itself (a missing variable): nothing was stored.
    log.error({ err }, 'runner crashed')
    outcome = { ok: false, failure: CRASHED, exitCode: 1 }
  }
  if (!outcome.ok) {
    try {
      writeFileSync(config?.terminationMessagePath ?? '/dev/termination-log', JSON.stringify(outcome.failure))
    } catch {
      // No termination log (run outside a pod): the exit code still tells the story.
    }
  }
  await flushSpans(stopTracing)
  process.exit(outcome.ok ? 0 : outcome.exitCode)
}

const CRASHED: RunnerFailure = { code: 'upstream_error', message: 'The utility failed unexpectedly.' }

/**
 * One job: read its input, run the utility, store the result manifest. A failure removes what
 * the run stored and is returned classified (never thrown); `tracing`, when the job is traced
 * and the program has started it, makes each step a span of the job's trace.
 */
export async function runJob<I>(
  cfg: RunnerConfig,
  handler: (ctx: RunContext<I>) => Promise<UtilityOutcome>,
  log: Logger,
  tracing?: typeof Tracing,
): Promise<JobOutcome> {
  let storage: ObjectStore | undefined
  /** Outputs stored so far: removed again when the run fails, so a failed job leaves nothing. */
  const written: string[] = []
  let reporter: ProgressReporter | undefined
  let answered: RunnerResult | undefined
  try {
    let step: Step = untraced
    let run: (body: () => Promise<void>) => Promise<void> = (body) => body()
    let traceFields: () => Record<string, string> = () => ({})
    if (cfg.tracing && tracing) {
      const t = tracing
      step = tracedSteps(t)
      traceFields = t.traceLogFields
      const attributes = { 'dutil.job.id': cfg.jobId, 'dutil.utility': cfg.utility }
      run = (body) => t.inSpan('runner', { parent: t.contextOf(cfg.tracing!.traceparent), attributes }, body)
    }
    await run(async () => {
      const startedAt = Date.now()
      const store_ = s3ObjectStore(cfg.storage)
      storage = store_
      // Its lines carry the runner span's trace and span id when the job is traced.
      const child = log.child({ jobId: cfg.jobId, utility: cfg.utility, ...traceFields() })
      let stored: unknown
      let input: I
      if (cfg.sealedInput === undefined) {
        try {
          stored = await step('download input', {}, () => readJson<unknown>(store_, inputObjectKey(cfg.jobId)))
        } catch (err) {
          // Storage briefly away: the Job tries again; if it stays away, the job fails storage_error.
          child.error({ err }, 'reading the job input from storage failed')
          throw new RunnerError('storage_error', "The job's input could not be read from storage.", undefined, true)
        }
      }
      try {
        // A small input rode with the job, sealed whole; passwords are sealed where the input is
        // stored. Both are opened here, in memory only.
        const sealed = cfg.sealedInput
        if (sealed !== undefined)
          stored = await step('open input', {}, async () => openDocument(sealed, cfg.sealKey, cfg.jobId))
        input = openInput(stored, cfg.sealKey, cfg.jobId) as I
      } catch (err) {
        child.error({ err: (err as Error).message }, "the job's sealed input could not be opened")
        throw new RunnerError('internal', "The job's sealed input could not be opened by its runner.")
      }
      child.info('runner started')
      // storageMs is wall time with at least one storage call in flight (calls overlap).
      let storageMs = 0
      let active = 0
      let since = 0
      const track = async <T>(call: () => Promise<T>): Promise<T> => {
        if (active++ === 0) since = Date.now()
        try {
          return await call()
        } finally {
          if (--active === 0) storageMs += Date.now() - since
        }
      }
      const storageFailed = (err: unknown, key: string) => {
        child.error({ err, key }, 'storing output failed')
        return new RunnerError('storage_error', 'Copying the output to storage failed.')
      }
      const store: RunContext<I>['store'] = async (file, body, contentType, extra) => {
        const key = outputKey(cfg.utility, cfg.createdAtMs, cfg.jobId, file)
        try {
          written.push(key)
          await step('upload', { 'dutil.file': baseName(file), 'dutil.file.size': body.length }, () =>
            track(() => store_.putObject(key, body, contentType)),
          )
        } catch (err) {
          throw storageFailed(err, key)
        }
        return { key, name: baseName(file), size: body.length, contentType, ...extra }
      }
      const storeStream: RunContext<I>['storeStream'] = async (file, source, contentType, extra, opts) => {
        const key = outputKey(cfg.utility, cfg.createdAtMs, cfg.jobId, file)
        try {
          written.push(key)
          const up = await step('upload', { 'dutil.file': baseName(file) }, async (annotate) => {
            const done = await uploadStream(source, { store: store_, key, contentType, track, large: opts?.large })
            annotate({ 'dutil.file.size': done.size })
            return done
          })
          return { key, name: baseName(file), size: up.size, contentType, ...extra }
        } catch (err) {
          throw err instanceof StorageWriteError ? storageFailed(err.inner, key) : err
        }
      }
      reporter = new ProgressReporter((p) => writeJson(store_, progressObjectKey(cfg.jobId), p), {
        intervalMs: PROGRESS_INTERVAL_MS,
        firstAfterMs: PROGRESS_INTERVAL_MS,
      })
      const progress: RunContext<I>['progress'] = (done, total) => reporter!.report(done, total)
      const outcome = await step('work', {}, async (annotate) => {
        const done = await handler({ config: cfg, input, storage: store_, log: child, store, storeStream, progress })
        annotate({ 'dutil.result.files': done.files.length })
        for (const [k, v] of Object.entries(done.extras ?? {})) annotate({ [`dutil.result.${k}`]: v })
        return done
      })
      // No progress write may land after the run (or be cut off by its exit); the manifest carries the last count.
      await reporter.stop()
      const result: RunnerResult = {
        files: outcome.files,
        extras: outcome.extras ?? {},
        startedAt: isoMs(startedAt),
        upstreamMs: Math.max(0, Date.now() - startedAt - storageMs),
        storageMs,
        ...(reporter.last ? { progress: reporter.last } : {}),
      }
      // A pool runner answers a small manifest with the job's state: no storage round trip.
      if (cfg.answerResult && Buffer.byteLength(JSON.stringify(result)) <= POOL.maxAnsweredResultBytes)
        answered = result
      else
        try {
          await step('store manifest', {}, () => writeJson(store_, resultObjectKey(cfg.jobId), result))
        } catch (err) {
          child.error({ err }, 'storing result manifest failed')
          throw new RunnerError('storage_error', 'Copying the output to storage failed.')
        }
      // The report was for the job while it ran; its result carries the last count now, so the
      // report goes (a job's bookkeeping is its input and result, however long it ran).
      if (reporter.wrote)
        await store_.deleteObject(progressObjectKey(cfg.jobId)).catch((err: unknown) => {
          child.warn({ err }, 'removing the progress report failed')
        })
      child.info({ files: result.files.length, upstreamMs: result.upstreamMs, storageMs }, 'runner succeeded')
    })
    return answered ? { ok: true, result: answered } : { ok: true }
  } catch (err) {
    // A failed run leaves nothing behind, its progress report included (the job keeps what the
    // operator last copied from it).
    await reporter?.stop()
    if (reporter) written.push(progressObjectKey(cfg.jobId))
    const classified = err instanceof RunnerError
    const failure: RunnerFailure = classified ? err.toFailure() : CRASHED
    log.error({ err, failure, jobId: cfg.jobId }, classified ? 'runner rejected the job' : 'runner crashed')
    for (const key of written) await storage?.deleteObject(key).catch(() => {})
    return { ok: false, failure, exitCode: classified ? err.exitCode : 1 }
  }
}

type Attributes = Record<string, string | number | boolean>
/** One step of the run: a span of the job's trace when it is traced; `annotate` adds to it. */
type Step = <T>(
  name: string,
  attributes: Attributes,
  fn: (annotate: (a: Attributes) => void) => Promise<T>,
) => Promise<T>
const untraced: Step = (_name, _attributes, fn) => fn(() => {})
const tracedSteps =
  (t: typeof Tracing): Step =>
  (name, attributes, fn) =>
    t.inSpan(name, { attributes }, (span) => fn((a) => span.setAttributes(a)))

/** The job's spans go to the collector before the runner exits, for 1 s at most. */
async function flushSpans(stop: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([stop().catch(() => {}), new Promise((r) => (timer = setTimeout(r, 1000)))])
  clearTimeout(timer)
}
