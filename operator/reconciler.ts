import type { BatchV1Api, CustomObjectsApi, ObjectCache, V1Job, V1Pod } from '@kubernetes/client-node'
import type { Client } from 'minio'
import type { Logger } from 'pino'
import { JOB_RECORD_FINALIZER, LABELS } from '../contract/api-group.js'
import { catalog } from '../runners/catalog.js'
import type { CallbackDelivery, UtilityJobResource, UtilityJobStatus } from '../contract/crd-schemas.js'
import { effectiveStatus, isTerminal, type JobRecord, traceparentOfJob } from '../contract/job-view.js'
import type { UtilityDefinition } from '../contract/utility.js'
import { context, contextOf, failSpan, inSpan, jobAttributes, pastSpan } from '../platform/tracing.js'
import { MAX_PROGRESS_BYTES, progressObjectKey } from '../contract/runner-protocol.js'
import { JsonBoundError } from '../platform/bounded-json.js'
import { readJsonObject } from '../platform/storage-client.js'
import { UtilityJobClient } from '../platform/utility-job-client.js'
import { parseTime } from '../contract/time.js'
import { deadlineSeconds, jobNameFor, type RunnerSettings } from './desired-job.js'
import {
  admittedSyncStatus,
  cancelledStatus,
  cancelWanted,
  failedStatus,
  progressUpdate,
  runningStatus,
  succeededStatus,
} from './next-status.js'
import { firstPodStart } from './observe-job.js'
import {
  answeredResult,
  judgeManifest,
  type ManifestVerdict,
  readResultManifest,
  RESULT_NOT_ACCEPTED,
} from './result-manifest.js'
import { boundedStatus } from '../contract/status-budget.js'
import type { Admission } from './admission.js'
import { JobRun } from './job-run.js'
import { PoolRun, RUNNING_STATUS_AFTER_MS } from './pool-run.js'
import type { RunBackend, RunObservation } from './run-backend.js'
import type { RunnerPools } from './runner-pools.js'
import type { IssueCredentials } from './runner-credentials.js'
import { CallbackController } from './callbacks/controller.js'
import { nextConditions, reasonOf, wasAdmitted } from './conditions.js'
import type { EventRecorder, JobEvent } from './events.js'

export interface ReconcilerDeps {
  namespace: string
  utilityJobs: ObjectCache<UtilityJobResource>
  jobs: ObjectCache<V1Job>
  pods: ObjectCache<V1Pod>
  batch: BatchV1Api
  custom: CustomObjectsApi
  storage: Client
  /** Throws (or ends the process) when this replica may no longer act as leader: called before every write. */
  fence?: () => void
  /** Whether a queued job may have its batch Job now (per-utility limits, fair turns). */
  admission: Pick<Admission, 'mayStart' | 'schedule' | 'wasHeld'> &
    Partial<Pick<Admission, 'finishedEarly' | 'isFinishing' | 'heldBackBy' | 'hasWaiting'>>
  /** Each runner's own temporary storage credentials (STS with the job's session policy). */
  issueCredentials: IssueCredentials
  /** A pooled job's credentials: its tenant's grant where it covers the job (default: `issueCredentials`). */
  issuePoolCredentials?: IssueCredentials
  bucket: string
  runner: RunnerSettings
  log: Logger
  now?: () => number
  onFinished?: (uj: UtilityJobResource, status: UtilityJobStatus) => void
  /** The job record (PostgreSQL): written before every status write (docs/adr/0010). */
  records: JobRecordWriter
  /** How long a finished, archived UtilityJob stays in the cluster before it is deleted. */
  graceMs: number
  /** How long a runner may wait for an image that cannot be pulled before its job fails. */
  imagePullGraceMs?: number
  /** How long a failed job's batch Job stays after the failure is recorded (default 5 minutes). */
  failedJobGraceMs?: number
  /** Kubernetes Events about each job (events.k8s.io/v1), for `kubectl describe utilityjob`. */
  events?: EventRecorder
  /** The runner pools of utilities in pool mode (docs/adr/0026-runner-pools.md). */
  pools?: RunnerPools
  /** The pods a UtilityJob owns (an index of the pod cache); without it, the cache is searched. */
  podsOf?: (name: string) => V1Pod[]
  /** Whether an API key is revoked (from the ApiKey watch): its queued jobs are cancelled. */
  keyRevoked?: (apiKeyId: string) => boolean
}

/** What the reconciler writes to the job record. */
export interface JobRecordWriter {
  /** The job as it is (or is about to be): creates the row when missing, never moves a finished one back. */
  transition(job: JobRecord): Promise<void>
  /** The callback delivery bookkeeping, as the status holds it. */
  callback(jobId: string, delivery: CallbackDelivery): Promise<void>
}

/** When a finished job's UtilityJob may go: its grace after finishing, once its callback has settled. */
export function removableAt(uj: UtilityJobResource, graceMs: number): number | null {
  if (!isTerminal(uj) || CallbackController.wants(uj)) return null
  const s = effectiveStatus(uj)
  const finished = parseTime(s.callback?.finishedAt) ?? parseTime(s.finishedAt) ?? parseTime(uj.spec.createdAt) ?? 0
  return finished + graceMs
}

/** The status, naming the pod that runs the job when there is one (pool mode). */
function named(status: UtilityJobStatus, runner: string | undefined): UtilityJobStatus {
  return runner ? { ...status, runnerPod: runner } : status
}

function earliest(...delays: Array<number | undefined>): { requeueAfterMs: number } | undefined {
  const set = delays.filter((d): d is number => d !== undefined)
  return set.length ? { requeueAfterMs: Math.min(...set) } : undefined
}

/** How often a running job's progress is read from storage (its runner writes it at most once a second). */
export const PROGRESS_POLL_MS = 2_000

/** Whether the job record's finalizer holds the UtilityJob until its final row is written. */
function hasRecordFinalizer(uj: UtilityJobResource): boolean {
  return (uj.metadata.finalizers ?? []).includes(JOB_RECORD_FINALIZER)
}

type Requeue = { requeueAfterMs?: number } | void

/**
 * Level-triggered reconcile of one UtilityJob, keyed by name: read the world (the UtilityJob,
 * its run as its run backend shows it, the runner's result manifest), make sure exactly one run
 * exists, and write the status the world implies, once, through the status subresource. One
 * sequence for every job, whatever runs it (a batch Job, a pool pod: run-backend.ts): settle a
 * finished job, cancel a queued one, admit, start, observe, next status.
 */
export class UtilityJobReconciler {
  /**
   * resourceVersion of each status this process wrote. A cached object older than that is a
   * view the watch has not caught up with: acting on it would only write the same status again
   * and lose on the conflict, so the pass waits for the watch event instead.
   */
  private readonly written = new Map<string, number>()
  /** UtilityJobs without the record's finalizer whose row this process has written. */
  private readonly recorded = new Set<string>()
  /** Jobs of a pooled utility that this process started as batch Jobs (the watch may not show the Job yet). */
  private readonly asBatchJob = new Set<string>()
  private readonly jobRun: JobRun
  private readonly poolRun: PoolRun | undefined
  private readonly utilityJobs: UtilityJobClient

  constructor(private readonly d: ReconcilerDeps) {
    const now = () => this.now()
    this.utilityJobs = new UtilityJobClient(d.custom, d.namespace)
    this.jobRun = new JobRun({
      namespace: d.namespace,
      jobs: d.jobs,
      podsOf: (uj) => this.podsOf(uj),
      batch: d.batch,
      storage: d.storage,
      bucket: d.bucket,
      issueCredentials: d.issueCredentials,
      runner: d.runner,
      fence: d.fence,
      now,
      imagePullGraceMs: d.imagePullGraceMs,
      failedJobGraceMs: d.failedJobGraceMs,
      finishedEarly: d.admission.finishedEarly?.bind(d.admission),
      slotsWanted: d.admission.hasWaiting?.bind(d.admission),
    })
    this.poolRun =
      d.pools &&
      new PoolRun({
        pools: d.pools,
        issueCredentials: d.issuePoolCredentials ?? d.issueCredentials,
        fence: d.fence,
        now,
      })
  }

  private now(): number {
    return this.d.now ? this.d.now() : Date.now()
  }

  async reconcile(name: string): Promise<Requeue> {
    const uj = this.d.utilityJobs.get(name, this.d.namespace)
    if (!uj) {
      this.written.delete(name)
      this.recorded.delete(name)
      this.asBatchJob.delete(name)
      this.jobRun.forget(name)
      this.poolRun?.forget(name)
      return
    }
    // The pass runs in the job's trace: its spans join it, its log lines carry it.
    return context.with(contextOf(traceparentOfJob(uj)), () => this.reconcileJob(name, uj))
  }

  /**
   * What runs the job: its pool pod once it has one; a new job of a pooled utility goes to the
   * pool (a Job made before the utility was pooled, or for a job the full pool had no room for,
   * runs on); everything else, a batch Job.
   */
  private runOf(uj: UtilityJobResource): RunBackend {
    const pool = this.poolRun
    if (!pool || !this.d.pools || this.asBatchJob.has(uj.metadata.name)) return this.jobRun
    if (uj.status?.runnerPod || this.d.pools.holds(uj)) return pool
    if (!isTerminal(uj) && this.d.pools.poolOf(uj.spec.utility) && !this.d.jobs.get(jobNameFor(uj), this.d.namespace))
      return pool
    return this.jobRun
  }

  private async reconcileJob(name: string, uj: UtilityJobResource): Promise<Requeue> {
    const written = this.written.get(name)
    if (written !== undefined) {
      if (Number(uj.metadata.resourceVersion) < written) return
      this.written.delete(name) // the cache has caught up
    }
    const log = this.d.log.child({ jobId: uj.spec.jobId, utility: uj.spec.utility })
    if (uj.metadata.deletionTimestamp) return this.finalize(uj, log)
    if (!hasRecordFinalizer(uj) && !this.recorded.has(name)) {
      // Made without the gateway (kubectl), or before the job record existed: the record may not
      // hold it yet, so its row is written as it is, once per process. (The gateway writes a
      // job's row before its UtilityJob, with the finalizer: nothing to do for those.)
      this.d.fence?.()
      await this.d.records.transition(uj)
      this.recorded.add(name)
    }
    // Its runner pod was waiting for a node, which held back its utility's admissions: look again.
    if (this.d.admission.heldBackBy?.(name)) this.d.admission.schedule()
    const run = this.runOf(uj)
    if (isTerminal(uj)) {
      // Finished from its stored result: its slot frees once its pod shows the runner exited.
      if (this.d.admission.isFinishing?.(name)) this.d.admission.schedule()
      const runAgainIn = await run.settle(uj, log)
      const settled = await this.settle(uj, log)
      return earliest(settled?.requeueAfterMs, runAgainIn)
    }
    const utility = catalog.get(uj.spec.utility)
    if (!utility) {
      await this.writeStatus(
        uj,
        failedStatus(uj, { code: 'internal', message: 'This utility is not available.' }, null, this.now()),
        log,
      )
      return
    }
    const deadline = deadlineSeconds(uj, utility)
    if (cancelWanted(uj, this.d.keyRevoked) && effectiveStatus(uj).state === 'queued' && !run.begun(uj)) {
      // Still queued: the job never runs. Its run (if started a moment ago) goes first.
      await run.stop(uj, 'cancelled', log)
      await this.writeStatus(uj, cancelledStatus(uj, this.now()), log)
      return
    }
    const obs = await run.observe(uj, utility, deadline, log)
    switch (obs.kind) {
      case 'none':
        return this.admitAndStart(uj, utility, deadline, run, log)
      case 'wait':
        return earliest(obs.recheckInMs)
      case 'started':
        return this.writeAdmitted(uj, obs.running, obs.runner, log)
      case 'running':
        return this.running(uj, utility, obs, run, log)
      case 'failed':
        return this.finish(
          uj,
          named(failedStatus(uj, obs.error, obs.startedAt, this.now()), obs.runner),
          run,
          log,
          obs.stop,
        )
      case 'succeeded':
        return this.succeeded(uj, utility, obs, run, log)
    }
  }

  /**
   * Above its utility's limit (or its tenant's share) a job stays queued, with no run, until
   * admitted; a sync job held back says so (Admitted False) while its client waits. Admitted, its
   * run starts, and the status says so.
   */
  private async admitAndStart(
    uj: UtilityJobResource,
    utility: UtilityDefinition,
    deadline: number,
    run: RunBackend,
    log: Logger,
  ): Promise<Requeue> {
    const status = effectiveStatus(uj)
    if (!this.d.admission.mayStart(uj)) {
      if (
        uj.spec.mode === 'sync' &&
        status.state === 'queued' &&
        !uj.status?.state &&
        this.d.admission.wasHeld(uj.metadata.name)
      )
        await this.writeStatus(uj, status, log)
      this.d.admission.schedule()
      return
    }
    const admittedAt = Date.now()
    let started = await run.start(uj, utility, deadline, log)
    if (started.kind === 'job') {
      // The pool had no room for the job's tenant: it runs as a batch Job of its own.
      this.asBatchJob.add(uj.metadata.name)
      log.info('pool full of other tenants: job runs as a batch Job')
      run = this.jobRun
      started = await run.start(uj, utility, deadline, log)
    }
    // A job that can never start fails now, and its slot (and any pool pod) is free for others.
    if (started.kind === 'refused') return this.finish(uj, failedStatus(uj, started.error, null, this.now()), run, log)
    if (started.kind !== 'started') return earliest(started.kind === 'wait' ? started.recheckInMs : undefined)
    admissionWaitSpan(uj, admittedAt)
    // A warm pod runs it from now: nothing is written until it has run a while (docs/adr/0035),
    // unless its status told a wait already (a sync job held back says so, and now that it runs).
    if (started.quiet && !uj.status?.conditions?.length && !this.d.admission.wasHeld(uj.metadata.name))
      return { requeueAfterMs: RUNNING_STATUS_AFTER_MS }
    this.d.events?.record(uj, started.event)
    // A runner that runs from now was told by the start's Event: no Started Event beside it.
    await this.writeAdmitted(uj, started.running, started.runner, log, started.running)
  }

  /**
   * Admitted: the Admitted condition turns True. A sync job runs from here (its client is
   * waiting); an async job runs from here when its runner does (a warm pod), else it stays queued
   * until its runner starts.
   */
  private async writeAdmitted(
    uj: UtilityJobResource,
    running: boolean,
    runner: string | undefined,
    log: Logger,
    startTold = false,
  ): Promise<void> {
    const waited = uj.status?.state === 'queued' || this.d.admission.wasHeld(uj.metadata.name)
    const status =
      uj.spec.mode === 'sync'
        ? admittedSyncStatus(uj, waited, this.now())
        : running
          ? runningStatus(uj, this.now(), this.now())
          : effectiveStatus(uj)
    await this.writeStatus(uj, named(status, runner), log, { admitted: true, startTold })
  }

  /** A running job: its state, and its runner's progress report copied to the status. */
  private async running(
    uj: UtilityJobResource,
    utility: UtilityDefinition,
    obs: Extract<RunObservation, { kind: 'running' }>,
    run: RunBackend,
    log: Logger,
  ): Promise<Requeue> {
    if (obs.quiet && uj.status?.state !== 'running') {
      // Handed to a pod with nothing written: its start is told once it has run a while.
      const wait = obs.quiet.until - this.now()
      if (wait > 0) return earliest(obs.recheckInMs, wait)
      this.d.events?.record(uj, obs.quiet.event)
      const started = named(runningStatus(uj, obs.startedAt, obs.startedAt), obs.runner)
      await this.writeStatus(uj, started, log, { admitted: true, startTold: true })
      return earliest(obs.recheckInMs, PROGRESS_POLL_MS)
    }
    let status = uj.status?.state !== 'running' ? runningStatus(uj, obs.startedAt, this.now()) : null
    const unit = utility.runner.progressUnit
    if (!unit || !obs.progress) {
      if (status) await this.writeStatus(uj, status, log)
      return earliest(obs.recheckInMs)
    }
    const report = await this.progressReport(uj)
    if (report instanceof JsonBoundError) {
      // A runner wrote a progress report over its size or nesting bound: not read further.
      log.error({ what: 'progress report', bound: report.bound, err: report.message }, 'runner output refused')
      return this.finish(
        uj,
        failedStatus(uj, RESULT_NOT_ACCEPTED, obs.startedAt, this.now()),
        run,
        log,
        'runner output refused',
      )
    }
    const progress = progressUpdate(uj.status?.progress, report, unit)
    if (progress) status = { ...(status ?? effectiveStatus(uj)), progress }
    if (status) await this.writeStatus(uj, status, log)
    return earliest(obs.recheckInMs, PROGRESS_POLL_MS)
  }

  /** The runner says it succeeded: its result manifest, read and checked, decides. */
  private async succeeded(
    uj: UtilityJobResource,
    utility: UtilityDefinition,
    obs: Extract<RunObservation, { kind: 'succeeded' }>,
    run: RunBackend,
    log: Logger,
  ): Promise<Requeue> {
    const verdict: ManifestVerdict = obs.stored
      ? { result: obs.stored }
      : judgeManifest(
          await inSpan('check result', { attributes: jobAttributes(uj.spec) }, async (span) => {
            const r =
              obs.answered !== undefined
                ? answeredResult(uj, obs.answered)
                : await readResultManifest(this.d.storage, this.d.bucket, uj, obs.finishedAt, this.now())
            span.setAttribute('dutil.result.outcome', r.outcome)
            if (r.outcome === 'accepted') span.setAttribute('dutil.result.files', r.result.files.length)
            return r
          }),
          log,
        )
    if ('retryInMs' in verdict) return { requeueAfterMs: verdict.retryInMs }
    if ('result' in verdict)
      return this.finish(
        uj,
        named(succeededStatus(uj, verdict.result, obs.startedAt, this.now(), utility.runner.progressUnit), obs.runner),
        run,
        log,
      )
    return this.finish(
      uj,
      named(failedStatus(uj, verdict.error, obs.startedAt, this.now()), obs.runner),
      run,
      log,
      verdict.overBound ? 'runner output refused' : undefined,
    )
  }

  /**
   * A finished job: its status first (so a failed stop never leaves it without a terminal
   * state), then its run stopped if it would go on, then what it held is free for others.
   */
  private async finish(
    uj: UtilityJobResource,
    status: UtilityJobStatus,
    run: RunBackend,
    log: Logger,
    stop?: string,
  ): Promise<void> {
    await this.writeStatus(uj, status, log)
    if (stop) await run.stop(uj, stop, log)
    run.release(uj)
  }

  /**
   * The progress report the job's runner last wrote to storage (a runner that counts progress
   * writes one; it is copied to the status while the job runs), null when there is none yet, or
   * the bound it broke: read within a size and depth bound, since a runner that parsed hostile
   * input may be hostile.
   */
  private async progressReport(uj: UtilityJobResource): Promise<unknown> {
    try {
      return await readJsonObject<unknown>(
        this.d.storage,
        this.d.bucket,
        progressObjectKey(uj.spec.jobId),
        MAX_PROGRESS_BYTES,
      )
    } catch (err) {
      if (err instanceof JsonBoundError && err.bound !== 'syntax') return err
      return null
    }
  }

  /**
   * A finished job past its grace, callback settled: the UtilityJob is deleted; its batch Job
   * goes with it (owner reference). The finalizer keeps the object until finalize() has stored
   * the final row (with the delivery summary).
   */
  private async settle(uj: UtilityJobResource, log: Logger): Promise<{ requeueAfterMs?: number } | void> {
    const at = removableAt(uj, this.d.graceMs)
    if (at === null) return // the callback controller's next write brings the job back here
    if (at > this.now()) return { requeueAfterMs: at - this.now() }
    // With the finalizer, finalize() writes the final row once the deletion is under way; a
    // UtilityJob made before the job record (no finalizer) is archived here, first.
    if (!hasRecordFinalizer(uj)) await this.archive(uj)
    if (await this.utilityJobs.delete(uj.metadata.name))
      log.info({ finishedAt: effectiveStatus(uj).finishedAt }, 'archived job removed from the cluster')
  }

  /** Writes the job's final row, callback bookkeeping included. */
  private async archive(job: UtilityJobResource): Promise<void> {
    await this.d.records.transition(job)
    const cb = job.status?.callback
    if (cb) await this.d.records.callback(job.spec.jobId, cb)
  }

  /**
   * A UtilityJob being deleted (after its grace, or by hand): its row is made final first, then
   * the finalizer goes. One deleted before it finished is recorded as lost.
   */
  private async finalize(uj: UtilityJobResource, log: Logger): Promise<void> {
    const finalizers = uj.metadata.finalizers ?? []
    if (!finalizers.includes(JOB_RECORD_FINALIZER)) return
    const final: UtilityJobResource = isTerminal(uj)
      ? uj
      : {
          ...uj,
          status: failedStatus(
            uj,
            { code: 'lost', message: 'The job was deleted from the cluster before it finished.' },
            firstPodStart(this.podsOf(uj)),
            this.now(),
          ),
        }
    // Its sealed passwords go with it (docs/adr/0042): the stored input that holds them is
    // removed before the finalizer, so a failed removal is tried again.
    if (uj.spec.inputSealed) await this.d.storage.removeObject(this.d.bucket, uj.spec.inputKey)
    await this.archive(final)
    if (!(await this.utilityJobs.removeFinalizer(uj, JOB_RECORD_FINALIZER))) return
    if (!isTerminal(uj))
      log.warn({ state: effectiveStatus(uj).state }, 'job deleted before it finished: recorded as lost')
  }

  private podsOf(uj: UtilityJobResource): V1Pod[] {
    if (this.d.podsOf) return this.d.podsOf(uj.metadata.name)
    return this.d.pods.list(this.d.namespace).filter((p) => p.metadata?.labels?.[LABELS.jobId] === uj.metadata.name)
  }

  /**
   * Writes the status the pass decided, in four steps: the status with its bookkeeping (a pure
   * function), the job's row, the status subresource, then what follows a change of state.
   */
  private async writeStatus(
    uj: UtilityJobResource,
    status: UtilityJobStatus,
    log: Logger,
    opts: { admitted?: boolean; startTold?: boolean } = {},
  ): Promise<void> {
    const admitted = opts.admitted || this.d.jobs.get(jobNameFor(uj), this.d.namespace) !== undefined
    const body = statusToWrite(uj, status, { admitted, now: this.now() })
    const write = async () => {
      await this.recordRow(body)
      await this.replaceStatus(body, log)
    }
    // A change of state is a span of the job's trace (a progress update is not).
    if (effectiveStatus(uj).state === status.state) await write()
    else
      await inSpan(
        'write status',
        { attributes: { ...jobAttributes(uj.spec), 'dutil.job.state': status.state } },
        async (span) => {
          if (status.error) failSpan(span, status.error.code)
          await write()
        },
      )
    log.info({ state: status.state, errorCode: status.error?.code }, 'status written')
    this.announce(uj, status, opts.startTold)
  }

  /**
   * Row first, status second: the list (the record) never shows an older state than the detail.
   * The row keeps every output file; the status only what fits its budget.
   */
  private async recordRow(body: UtilityJobResource): Promise<void> {
    this.d.fence?.()
    await this.d.records.transition(body)
  }

  /**
   * The status subresource, within its budget (contract/status-budget.ts). The fence again first:
   * the replica may have been paused while the row was written. The resourceVersion written is
   * remembered, so a pass on an older cached view waits for the watch instead.
   */
  private async replaceStatus(body: UtilityJobResource, log: Logger): Promise<void> {
    const bounded = { ...body, status: boundedStatus(body.status!) }
    if (bounded.status !== body.status)
      log.info(
        { files: body.status?.result?.files.length, inStatus: bounded.status.result?.files.length },
        'result files beyond the status budget kept in the job record only',
      )
    this.d.fence?.()
    const saved = await this.utilityJobs.replaceStatus(bounded)
    if (!saved) throw new Error('the UtilityJob changed while its status was being written; trying again')
    this.written.set(body.metadata.name, Number(saved.metadata.resourceVersion))
  }

  /**
   * After a status write: the Event of a change of state (but a start the start's own Event told
   * already), and a finished job's bookkeeping.
   */
  private announce(uj: UtilityJobResource, status: UtilityJobStatus, startTold = false): void {
    if (effectiveStatus(uj).state !== status.state && !(startTold && status.state === 'running')) {
      const event = transitionEvent(status, jobNameFor(uj), status.runnerPod ?? uj.status?.runnerPod)
      if (event) this.d.events?.record(uj, event)
    }
    if (isTerminal({ ...uj, status })) this.d.onFinished?.(uj, status)
  }
}

/** The wait for a slot, from acceptance to admission, as a span of its own. */
function admissionWaitSpan(uj: UtilityJobResource, admittedAt: number): void {
  const acceptedAt = parseTime(uj.spec.createdAt)
  if (acceptedAt !== null)
    pastSpan('admission wait', {
      startTime: Math.min(acceptedAt, admittedAt),
      endTime: admittedAt,
      attributes: jobAttributes(uj.spec),
    })
}

/**
 * The UtilityJob with the status to write: the decided status, the callback state carried over
 * as it is (it belongs to the callback controller), the batch Job's name, the generation it
 * answers and the conditions that follow from the previous ones. `admitted` says the job has (or
 * is getting) its batch Job; an earlier admission, or a running or succeeded state, counts too.
 */
export function statusToWrite(
  uj: UtilityJobResource,
  status: UtilityJobStatus,
  o: { admitted: boolean; now: number },
): UtilityJobResource {
  const callback = uj.status?.callback
  const jobName = jobNameFor(uj)
  // Pool mode: the pod the job was handed to, kept from then on; no batch Job.
  const runnerPod = status.runnerPod ?? uj.status?.runnerPod
  const previous = uj.status?.conditions
  // A pool pod named: the job was handed to it, so admitted (its start may not have been written).
  const admitted =
    o.admitted ||
    wasAdmitted(previous) ||
    Boolean(runnerPod) ||
    status.state === 'running' ||
    status.state === 'succeeded'
  const conditions = nextConditions({
    status,
    previous,
    admitted,
    jobName,
    runnerPod,
    utility: uj.spec.utility,
    generation: uj.metadata.generation,
    now: o.now,
  })
  return {
    ...uj,
    status: {
      ...status,
      ...(callback ? { callback } : {}),
      ...(runnerPod ? { runnerPod } : { jobName }),
      observedGeneration: uj.metadata.generation,
      conditions,
    },
  }
}

/** The Event for a job entering `status.state` (null for queued: JobCreated tells that story). */
export function transitionEvent(status: UtilityJobStatus, jobName: string, runnerPod?: string): JobEvent | null {
  switch (status.state) {
    case 'queued':
      return null
    case 'running':
      return {
        type: 'Normal',
        reason: 'Started',
        action: 'Start',
        note: runnerPod
          ? `The runner in pool pod ${runnerPod} started.`
          : `The runner of batch Job ${jobName} started.`,
      }
    case 'succeeded': {
      const n = status.result?.files.length ?? 0
      const where = runnerPod ? ` on pool pod ${runnerPod}` : ''
      return {
        type: 'Normal',
        reason: 'Succeeded',
        action: 'Complete',
        note: `Succeeded in ${status.timings.totalMs} ms${where}: ${n === 1 ? '1 file' : `${n} files`} stored.`,
      }
    }
    case 'failed':
      return {
        type: 'Warning',
        reason: status.error ? reasonOf(status.error.code) : 'Failed',
        action: 'Fail',
        note: status.error ? `${status.error.code}: ${status.error.message}` : 'The job failed.',
      }
    case 'cancelled':
      return { type: 'Normal', reason: 'Cancelled', action: 'Cancel', note: 'The job was cancelled.' }
  }
}
