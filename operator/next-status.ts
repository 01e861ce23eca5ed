import type { JobError, JobProgress, UtilityJobResource, UtilityJobStatus } from '../contract/crd-schemas.js'
import { effectiveStatus } from '../contract/job-view.js'
import type { RunnerProgress, RunnerResult } from '../contract/runner-protocol.js'
import { isoMs, parseTime } from '../contract/time.js'

/**
 * When the operator sees the runner start within this long of the pod's own start time, it
 * records its own (millisecond) clock; Kubernetes stores container start times in whole seconds.
 */
const FRESH_START_MS = 2_000

/** startedAt for a run that was just seen to start. Never before the job was accepted. */
export function startedAtFor(uj: UtilityJobResource, podStartedAt: number, now: number): number {
  const created = parseTime(uj.spec.createdAt)!
  const seen = now - podStartedAt <= FRESH_START_MS ? now : podStartedAt
  return Math.max(created, seen)
}

/**
 * A sync job the moment admission lets it start: a client is waiting, so it runs from here on.
 * Admitted on arrival it starts at its acceptance (queueMs 0); one that waited for a slot starts
 * now, and its queueMs is that wait.
 */
export function admittedSyncStatus(uj: UtilityJobResource, waited: boolean, now: number): UtilityJobStatus {
  const current = effectiveStatus(uj)
  const created = parseTime(uj.spec.createdAt)!
  const started = waited ? Math.max(created, now) : created
  return {
    ...current,
    state: 'running',
    startedAt: isoMs(started),
    timings: { ...current.timings, queueMs: started - created },
  }
}

export function runningStatus(uj: UtilityJobResource, podStartedAt: number, now: number): UtilityJobStatus {
  const current = effectiveStatus(uj)
  const created = parseTime(uj.spec.createdAt)!
  const started =
    uj.spec.mode === 'sync' ? (parseTime(current.startedAt) ?? created) : startedAtFor(uj, podStartedAt, now)
  return {
    ...current,
    state: 'running',
    startedAt: isoMs(started),
    timings: { ...current.timings, queueMs: started - created },
  }
}

function startOf(uj: UtilityJobResource, podStartedAt: number | null, finished: number): number {
  const current = effectiveStatus(uj)
  const recorded = parseTime(current.startedAt)
  if (recorded !== null) return recorded
  const created = parseTime(uj.spec.createdAt)!
  if (uj.spec.mode === 'sync') return created
  return Math.min(finished, Math.max(created, podStartedAt ?? finished))
}

export function succeededStatus(
  uj: UtilityJobResource,
  result: RunnerResult,
  podStartedAt: number | null,
  now: number,
  progressUnit?: string,
): UtilityJobStatus {
  const created = parseTime(uj.spec.createdAt)!
  const finished = Math.max(now, created)
  const started = startOf(uj, podStartedAt, finished)
  const last = uj.status?.progress
  // The runner's own last count (in its result manifest), else the last one seen while it ran, as the whole amount.
  const reported = progressUnit ? progressUpdate(undefined, result.progress, progressUnit) : null
  const progress = reported ?? (last ? progressOf(last.total ?? last.done, last.total, last.unit, finished) : null)
  return {
    state: 'succeeded',
    startedAt: isoMs(started),
    finishedAt: isoMs(finished),
    timings: {
      queueMs: started - created,
      upstreamMs: result.upstreamMs,
      storageMs: result.storageMs,
      totalMs: finished - created,
    },
    result: { files: result.files, extras: result.extras },
    error: null,
    ...(progress ? { progress } : {}),
  }
}

export function failedStatus(
  uj: UtilityJobResource,
  error: JobError,
  podStartedAt: number | null,
  now: number,
): UtilityJobStatus {
  const created = parseTime(uj.spec.createdAt)!
  const finished = Math.max(now, created)
  const started =
    podStartedAt === null && effectiveStatus(uj).startedAt === null ? null : startOf(uj, podStartedAt, finished)
  return {
    state: 'failed',
    startedAt: started === null ? null : isoMs(started),
    finishedAt: isoMs(finished),
    timings: {
      queueMs: started === null ? null : started - created,
      upstreamMs: started === null ? null : finished - started,
      storageMs: null,
      totalMs: finished - created,
    },
    result: null,
    error,
    // Where it stopped.
    ...(uj.status?.progress ? { progress: uj.status.progress } : {}),
  }
}

function progressOf(done: number, total: number | null, unit: string, at: number): JobProgress {
  return {
    done,
    total,
    unit,
    updatedAt: isoMs(at),
    summary: total === null ? `${done} ${unit}` : `${done}/${total} ${unit}`,
  }
}

/**
 * The progress to show after a runner's report, or null when there is nothing new to write.
 * The report comes from a runner that parsed hostile input: a malformed one is ignored, and
 * counts are kept within the total.
 */
export function progressUpdate(current: JobProgress | undefined, report: unknown, unit: string): JobProgress | null {
  const r = report as Partial<RunnerProgress> | null
  const count = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0
  if (!r || !count(r.done) || !(r.total === null || count(r.total)) || typeof r.at !== 'string') return null
  const at = parseTime(r.at)
  if (at === null) return null
  const total = r.total as number | null
  const done = total === null ? r.done! : Math.min(r.done!, total)
  if (current && current.done === done && current.total === total) return null
  return progressOf(done, total, unit, at)
}

/**
 * Whether a job that has not started is to be cancelled: its client asked, or its API key was
 * revoked (a revoked key's queued jobs never run; those already running finish).
 */
export function cancelWanted(
  uj: Pick<UtilityJobResource, 'spec'>,
  keyRevoked: (apiKeyId: string) => boolean = () => false,
): boolean {
  return Boolean(uj.spec.cancelRequested) || (uj.spec.apiKeyId !== '' && keyRevoked(uj.spec.apiKeyId))
}

export function cancelledStatus(uj: UtilityJobResource, now: number): UtilityJobStatus {
  const created = parseTime(uj.spec.createdAt)!
  const finished = Math.max(now, created)
  return {
    state: 'cancelled',
    startedAt: null,
    finishedAt: isoMs(finished),
    timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: finished - created },
    result: null,
    error: null,
  }
}
