import type { Logger } from 'pino'
import type { JobError, UtilityJobResource } from '../contract/crd-schemas.js'
import type { RunnerResult } from '../contract/runner-protocol.js'
import type { UtilityDefinition } from '../contract/utility.js'
import type { JobEvent } from './events.js'

/**
 * What the world says about a job's run, in the same words whatever runs it. The reconciler
 * decides the next status from this alone.
 */
export type RunObservation =
  /** No run yet: one starts once the job is admitted. */
  | { kind: 'none' }
  /** Nothing to decide now: look again after `recheckInMs` (or when a watch brings a change). */
  | { kind: 'wait'; recheckInMs?: number }
  /** The run was started and holds its slot, but the status does not say so yet. */
  | { kind: 'started'; running: boolean; runner?: string }
  | {
      kind: 'running'
      startedAt: number
      recheckInMs?: number
      /** The runner answers: its progress report is worth reading. */
      progress: boolean
      /** The pod that runs it, when that is a pool pod. */
      runner?: string
      /**
       * A run begun with no status written (a pooled hand-over): the status says `running` only
       * once it has run until then, and `event` tells the start with that write. A job that ends
       * sooner writes its outcome alone.
       */
      quiet?: { until: number; event: JobEvent }
    }
  | {
      kind: 'succeeded'
      startedAt: number | null
      /** When the run ended, if known. */
      finishedAt: number | null
      /** The result manifest, already read and checked (a run that stored it before its end was seen). */
      stored?: RunnerResult
      /** The result manifest as the runner answered it with its end (pool mode): unchecked, checked like a stored one. */
      answered?: unknown
      runner?: string
    }
  | {
      kind: 'failed'
      error: JobError
      startedAt: number | null
      /** The run is to be stopped after the failure is written, and why (a Job retrying, a runner past its limit). */
      stop?: string
      runner?: string
    }

/** What starting a run came to. */
export type RunStart =
  /**
   * Started: `running` when the runner runs from now (a warm pod), else it starts later (a new
   * pod). `quiet`: nothing is written now; the run's observation says when the start is told.
   */
  | { kind: 'started'; running: boolean; runner?: string; event: JobEvent; quiet?: boolean }
  /** Not started (no pod free, or an earlier pass started it already): look again then, or on a watch event. */
  | { kind: 'wait'; recheckInMs?: number }
  /** Not here: the job runs as a batch Job of its own instead (a pool full of pods other tenants use). */
  | { kind: 'job' }
  /** It can never start (storage refused its grant): the job fails with `error`, and frees what it held. */
  | { kind: 'refused'; error: JobError }

/**
 * Where a job runs: a batch Job of its own (job mode, operator/job-run.ts) or a warm pool pod
 * (pool mode, operator/pool-run.ts). The reconciler runs one sequence for every job (settle,
 * cancel, admit, start, observe, next status) and asks its run backend only these things.
 */
export interface RunBackend {
  /** Whether the job's runner may have begun: a queued job past that is no longer cancelled. */
  begun(uj: UtilityJobResource): boolean
  /** The run as the world shows it (reads caches, and for a pool pod, its answer). */
  observe(uj: UtilityJobResource, utility: UtilityDefinition, deadline: number, log: Logger): Promise<RunObservation>
  /** Starts the admitted job's run: its own storage credentials, its time limit. */
  start(uj: UtilityJobResource, utility: UtilityDefinition, deadline: number, log: Logger): Promise<RunStart>
  /** Stops the run (cancelled, failed while it would go on, past its limit). */
  stop(uj: UtilityJobResource, why: string, log: Logger): Promise<void>
  /** The job finished: what it held is free for others. */
  release(uj: UtilityJobResource): void
  /** A finished job's run, kept a while or let go; when to look again. */
  settle(uj: UtilityJobResource, log: Logger): Promise<number | undefined>
  /** The job is gone: nothing is kept for it. */
  forget(name: string): void
}
