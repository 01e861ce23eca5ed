import type { Client } from 'minio'
import type { Logger } from 'pino'
import type { JobError, UtilityJobResource } from '../contract/crd-schemas.js'
import { MAX_RESULT_MANIFEST_BYTES, resultObjectKey, type RunnerResult } from '../contract/runner-protocol.js'
import { JsonBoundError } from '../platform/bounded-json.js'
import { readJsonObject } from '../platform/storage-client.js'
import { resultProblem } from './result-check.js'

/** How long after its runner finished a job's result manifest is read again while storage is unreachable. */
export const RESULT_READ_RETRY_MS = 120_000
/** The pause between those reads. */
export const RESULT_READ_RETRY_EVERY_MS = 2_000

/**
 * What reading a succeeded runner's result manifest came to:
 * - `accepted`: read within its bounds and checked (result-check.ts): the job succeeded;
 * - `retry`: storage did not answer, and the runner finished less than RESULT_READ_RETRY_MS ago;
 * - `unreadable`: still no answer after that, or the manifest is missing: `storage_error`;
 * - `over-bound`: larger or deeper than its bounds, or not JSON: never read further;
 * - `refused`: it names files outside the job's own folder, or breaks another rule: `internal`.
 */
export type ManifestReading =
  | { outcome: 'accepted'; result: RunnerResult }
  | { outcome: 'retry'; requeueAfterMs: number; err: string }
  | { outcome: 'unreadable'; err: unknown }
  | { outcome: 'over-bound'; err: JsonBoundError }
  | { outcome: 'refused'; problem: string }

/** Reads and checks the manifest a runner wrote; the manifest comes from code that parsed hostile input. */
export async function readResultManifest(
  storage: Client,
  bucket: string,
  uj: UtilityJobResource,
  finishedAt: number | null,
  now: number,
): Promise<ManifestReading> {
  let result: RunnerResult
  try {
    result = await readJsonObject<RunnerResult>(
      storage,
      bucket,
      resultObjectKey(uj.spec.jobId),
      MAX_RESULT_MANIFEST_BYTES,
    )
  } catch (err) {
    if (err instanceof JsonBoundError) return { outcome: 'over-bound', err }
    // Storage briefly unreachable: the output is there, so look again for a while before failing.
    const missing = ['NoSuchKey', 'NotFound'].includes((err as { code?: string }).code ?? '')
    if (!missing && now - (finishedAt ?? now) < RESULT_READ_RETRY_MS)
      return { outcome: 'retry', requeueAfterMs: RESULT_READ_RETRY_EVERY_MS, err: (err as Error).message }
    return { outcome: 'unreadable', err }
  }
  const problem = resultProblem(uj, result)
  return problem ? { outcome: 'refused', problem } : { outcome: 'accepted', result }
}

/** A manifest the runner answered with its job's end rather than storing it (pool mode): the same checks. */
export function answeredResult(uj: UtilityJobResource, result: unknown): ManifestReading {
  const problem = resultProblem(uj, result)
  return problem ? { outcome: 'refused', problem } : { outcome: 'accepted', result: result as RunnerResult }
}

/** The job's error when the operator will not take its runner's result. */
export const RESULT_NOT_ACCEPTED: JobError = { code: 'internal', message: "The job's result could not be accepted." }

/**
 * What a reading means for the job, logged once here: the caller reads again in `retryInMs`,
 * fails the job with `error` (`overBound`: the runner's output is refused, and job mode removes
 * its Job), or finishes it with `result`. Job mode and pool mode act on it alike.
 */
export type ManifestVerdict = { retryInMs: number } | { error: JobError; overBound: boolean } | { result: RunnerResult }

export function judgeManifest(read: ManifestReading, log: Logger): ManifestVerdict {
  switch (read.outcome) {
    case 'retry':
      log.warn({ err: read.err }, 'reading the result manifest failed; retrying')
      return { retryInMs: read.requeueAfterMs }
    case 'over-bound':
      log.error({ what: 'result manifest', bound: read.err.bound, err: read.err.message }, 'runner output refused')
      return { error: RESULT_NOT_ACCEPTED, overBound: true }
    case 'unreadable':
      log.error({ err: read.err }, 'reading the result manifest failed')
      return {
        error: { code: 'storage_error', message: 'The output could not be read back from storage.' },
        overBound: false,
      }
    case 'refused':
      log.error({ problem: read.problem }, 'runner result manifest refused')
      return { error: RESULT_NOT_ACCEPTED, overBound: false }
    case 'accepted':
      return { result: read.result }
  }
}
