import {
  PatchStrategy,
  setHeaderOptions,
  type BatchV1Api,
  type CustomObjectsApi,
  type ObjectCache,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node'
import type { Client } from 'minio'
import type { Logger } from 'pino'
import { API_GROUP, API_VERSION, JOB_RECORD_FINALIZER, LABELS, UTILITY_JOB } from '../contract/api-group.js'
import { catalog } from '../runners/catalog.js'
import type { CallbackDelivery, UtilityJobResource, UtilityJobStatus } from '../contract/crd-schemas.js'
import { effectiveStatus, isTerminal, type JobRecord } from '../contract/job-view.js'
import { apiStatus } from '../platform/kube.js'
import { MAX_PROGRESS_BYTES, progressObjectKey } from '../contract/runner-protocol.js'
import { JsonBoundError } from '../platform/bounded-json.js'
import { readJsonObject } from '../platform/storage-client.js'
import { parseTime } from '../contract/time.js'
import { deadlineSeconds, desiredJob, jobNameFor, type RunnerSettings } from './desired-job.js'
import {
  admittedSyncStatus,
  cancelledStatus,
  failedStatus,
  progressUpdate,
  runningStatus,
  succeededStatus,
} from './next-status.js'
import { firstPodStart, observeJob } from './observe-job.js'
import { readResultManifest } from './result-manifest.js'
import { boundedStatus } from '../contract/status-budget.js'
import type { Admission } from './admission.js'
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
  admission: Pick<Admission, 'mayStart' | 'schedule' | 'wasHeld'>
  /** Each runner's own temporary storage credentials (STS with the job's session policy). */
  issueCredentials: IssueCredentials
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

/** How long a failed job's batch Job stays, by default (DUTIL_FAILED_JOB_GRACE_SECONDS). */
export const FAILED_JOB_GRACE_MS = 300_000

/**
 * When a failed job's batch Job may go: its grace after the failure. The UtilityJob keeps the
 * error, its conditions and Events; the Job and its pod stay a while for `kubectl logs`, but not
 * for the 15 minutes after which the cluster's own KubeJobFailed alert (kubernetes-mixin) fires
 * for a failed Job, which here may be nothing but a user's bad input. Null for other jobs.
 */
export function failedJobRemovableAt(uj: UtilityJobResource, graceMs: number): number | null {
  const s = effectiveStatus(uj)
  if (s.state !== 'failed') return null
  return (parseTime(s.finishedAt) ?? parseTime(uj.spec.createdAt) ?? 0) + graceMs
}

function earliest(...delays: Array<number | undefined>): { requeueAfterMs: number } | undefined {
  const set = delays.filter((d): d is number => d !== undefined)
  return set.length ? { requeueAfterMs: Math.min(...set) } : undefined
}

/** How often a running job's progress is read from storage (its runner writes it at most once a second). */
export const PROGRESS_POLL_MS = 2_000

/**
 * Level-triggered reconcile of one UtilityJob, keyed by name: read the world (the UtilityJob,
 * its Job, the Job's pods, the runner's result manifest), make sure exactly one Job exists,
 * and write the status the world implies, once, through the status subresource.
 */
export class UtilityJobReconciler {
  /**
   * resourceVersion of each status this process wrote. A cached object older than that is a
   * view the watch has not caught up with: acting on it would only write the same status again
   * and lose on the conflict, so the pass waits for the watch event instead.
   */
  private readonly written = new Map<string, number>()
  /** UtilityJobs whose row this process has made sure of (the upgrade path archives older ones). */
  private readonly recorded = new Set<string>()

  constructor(private readonly d: ReconcilerDeps) {}

  private now(): number {
    return this.d.now ? this.d.now() : Date.now()
  }

  async reconcile(name: string): Promise<{ requeueAfterMs?: number } | void> {
    const uj = this.d.utilityJobs.get(name, this.d.namespace)
    if (!uj) {
      this.written.delete(name)
      this.recorded.delete(name)
      return
    }
    const written = this.written.get(name)
    if (written !== undefined) {
      if (Number(uj.metadata.resourceVersion) < written) return
      this.written.delete(name) // the cache has caught up
    }
    const log = this.d.log.child({ jobId: uj.spec.jobId, utility: uj.spec.utility })
    if (uj.metadata.deletionTimestamp) return this.finalize(uj, log)
    if (!this.recorded.has(name)) {
      // A job the record may not hold yet (accepted before the record existed): archive it as it is.
      this.d.fence?.()
      await this.d.records.transition(uj)
      this.recorded.add(name)
    }
    if (isTerminal(uj)) {
      const batchJob = this.d.jobs.get(jobNameFor(uj), this.d.namespace)
      // A cancelled job's Job may have been created a moment before the cancel was seen.
      if (effectiveStatus(uj).state === 'cancelled' && batchJob) await this.deleteJob(jobNameFor(uj), log)
      let requeueAfterMs: number | undefined
      if (batchJob && !batchJob.metadata?.deletionTimestamp) {
        const at = failedJobRemovableAt(uj, this.d.failedJobGraceMs ?? FAILED_JOB_GRACE_MS)
        if (at !== null && at <= this.now()) await this.deleteJob(jobNameFor(uj), log, 'failed job recorded')
        else if (at !== null) requeueAfterMs = at - this.now()
      }
      const settled = await this.settle(uj, log)
      return earliest(settled?.requeueAfterMs, requeueAfterMs)
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
    const job = this.d.jobs.get(jobNameFor(uj), this.d.namespace)
    const pods = this.podsOf(uj)
    if (uj.spec.cancelRequested && effectiveStatus(uj).state === 'queued' && firstPodStart(pods) === null) {
      // Still queued: the job never runs. Its Job (if made already) goes, with its pending pod.
      // Deleted by name whatever the cache says: it may hold a Job created a moment ago.
      await this.deleteJob(jobNameFor(uj), log)
      await this.writeStatus(uj, cancelledStatus(uj, this.now()), log)
      return
    }
    if (!job) {
      const status = effectiveStatus(uj)
      const started = parseTime(status.startedAt)
      if (
        status.state === 'running' &&
        uj.spec.mode === 'async' &&
        started !== null &&
        this.now() > started + deadline * 1000
      ) {
        // Its Job vanished (deleted, or lost with its node) and the time limit has passed.
        await this.writeStatus(
          uj,
          failedStatus(
            uj,
            { code: 'lost', message: 'The job was interrupted and ran past its time limit.' },
            null,
            this.now(),
          ),
          log,
        )
        return
      }
      // Above its utility's limit (or its tenant's share) it stays queued, with no Job and no
      // Pod, until admitted. A sync job held back says so (Admitted False) while its client waits.
      if (!this.d.admission.mayStart(uj)) {
        if (uj.spec.mode === 'sync' && status.state === 'queued' && !uj.status?.state && this.d.admission.wasHeld(name))
          await this.writeStatus(uj, status, log)
        this.d.admission.schedule()
        return
      }
      await this.createJob(uj, utility, log)
      return
    }
    if (job.metadata?.ownerReferences?.[0]?.uid !== uj.metadata.uid) {
      log.warn({ job: job.metadata?.name }, 'a Job with this name belongs to another object; waiting')
      return { requeueAfterMs: 5000 }
    }
    const obs = observeJob(job, pods, deadline, {
      imagePullGraceMs: this.d.imagePullGraceMs ?? 60_000,
      now: this.now(),
    })
    switch (obs.kind) {
      case 'pending':
        return
      case 'image-pull-waiting':
        return { requeueAfterMs: obs.recheckInMs }
      case 'running': {
        let status = uj.status?.state !== 'running' ? runningStatus(uj, obs.podStartedAt, this.now()) : null
        const unit = utility.runner.progressUnit
        if (!unit) {
          if (status) await this.writeStatus(uj, status, log)
          return
        }
        // A runner that counts progress writes it to storage; it is copied here while the job runs.
        // Read within a size and depth bound: a runner that parsed hostile input may be hostile.
        let report: unknown = null
        try {
          report = await readJsonObject<unknown>(
            this.d.storage,
            this.d.bucket,
            progressObjectKey(uj.spec.jobId),
            MAX_PROGRESS_BYTES,
          )
        } catch (err) {
          if (err instanceof JsonBoundError && err.bound !== 'syntax')
            return this.refuseRunnerOutput(uj, 'progress report', err, obs.podStartedAt, log)
        }
        const progress = progressUpdate(uj.status?.progress, report, unit)
        if (progress) status = { ...(status ?? effectiveStatus(uj)), progress }
        if (status) await this.writeStatus(uj, status, log)
        return { requeueAfterMs: PROGRESS_POLL_MS }
      }
      case 'failed':
        await this.writeStatus(uj, failedStatus(uj, obs.error, obs.podStartedAt, this.now()), log)
        // A Job that would try again (an OOM kill) or wait on (an image it cannot pull) goes:
        // after the status, so a failed delete never leaves the job without a terminal state.
        if (obs.stopJob) await this.deleteJob(jobNameFor(uj), log, obs.error.code)
        return
      case 'succeeded': {
        const read = await readResultManifest(this.d.storage, this.d.bucket, uj, obs.finishedAt, this.now())
        const failed = (error: { code: 'storage_error' | 'internal'; message: string }) =>
          this.writeStatus(uj, failedStatus(uj, error, obs.podStartedAt, this.now()), log)
        switch (read.outcome) {
          case 'over-bound':
            return this.refuseRunnerOutput(uj, 'result manifest', read.err, obs.podStartedAt, log)
          case 'retry':
            log.warn({ err: read.err }, 'reading the result manifest failed; retrying')
            return { requeueAfterMs: read.requeueAfterMs }
          case 'unreadable':
            log.error({ err: read.err }, 'reading the result manifest failed')
            return failed({ code: 'storage_error', message: 'The output could not be read back from storage.' })
          case 'refused':
            log.error({ problem: read.problem }, 'runner result manifest refused')
            return failed({ code: 'internal', message: "The job's result could not be accepted." })
          case 'accepted':
            return this.writeStatus(
              uj,
              succeededStatus(uj, read.result, obs.podStartedAt, this.now(), utility.runner.progressUnit),
              log,
            )
        }
      }
    }
  }

  /**
   * A runner wrote a progress report or result manifest over its size or nesting bound, or (a
   * manifest) not JSON at all: it is not read further, the job fails `internal` and its Job goes.
   */
  private async refuseRunnerOutput(
    uj: UtilityJobResource,
    what: string,
    err: JsonBoundError,
    podStartedAt: number | null,
    log: Logger,
  ): Promise<void> {
    log.error({ what, bound: err.bound, err: err.message }, 'runner output refused')
    await this.writeStatus(
      uj,
      failedStatus(
        uj,
        { code: 'internal', message: "The job's result could not be accepted." },
        podStartedAt,
        this.now(),
      ),
      log,
    )
    await this.deleteJob(jobNameFor(uj), log, 'runner output refused')
  }

  private async createJob(
    uj: UtilityJobResource,
    utility: NonNullable<ReturnType<typeof catalog.get>>,
    log: Logger,
  ): Promise<void> {
    // Its own temporary storage credentials; made only when the Job is about to be created.
    this.d.fence?.()
    const asked = performance.now()
    const credentials = await this.d.issueCredentials(uj, utility)
    const credentialsMs = Math.round(performance.now() - asked)
    const body = desiredJob(uj, utility, this.d.runner, credentials)
    this.d.fence?.()
    let created: V1Job
    try {
      created = await this.d.batch.createNamespacedJob({ namespace: this.d.namespace, body })
      log.info(
        { job: body.metadata!.name, deadlineSeconds: body.spec!.activeDeadlineSeconds, credentialsMs },
        'job created',
      )
    } catch (err) {
      if (apiStatus(err) === 409) return // AlreadyExists: an earlier pass (or another replica) made it.
      throw err
    }
    const jobName = body.metadata!.name!
    this.d.events?.record(uj, {
      type: 'Normal',
      reason: 'JobCreated',
      action: 'Create',
      note: `Created batch Job ${jobName} (time limit ${body.spec!.activeDeadlineSeconds} s).`,
      related: { apiVersion: 'batch/v1', kind: 'Job', name: jobName, uid: created.metadata?.uid },
    })
    // Admitted: the Admitted condition turns True. An async job stays queued until its runner
    // starts; a sync job runs from here (its client is waiting).
    const waited = uj.status?.state === 'queued' || this.d.admission.wasHeld(uj.metadata.name)
    const status = uj.spec.mode === 'sync' ? admittedSyncStatus(uj, waited, this.now()) : effectiveStatus(uj)
    await this.writeStatus(uj, status, log, { admitted: true })
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
    if (!(uj.metadata.finalizers ?? []).includes(JOB_RECORD_FINALIZER)) await this.archive(uj)
    try {
      await this.d.custom.deleteNamespacedCustomObject({
        ...this.coords(),
        name: uj.metadata.name,
        propagationPolicy: 'Background',
      })
      log.info({ finishedAt: effectiveStatus(uj).finishedAt }, 'archived job removed from the cluster')
    } catch (err) {
      if (apiStatus(err) !== 404) throw err
    }
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
    await this.archive(final)
    try {
      await this.d.custom.patchNamespacedCustomObject(
        {
          ...this.coords(),
          name: uj.metadata.name,
          body: {
            metadata: {
              finalizers: finalizers.filter((f) => f !== JOB_RECORD_FINALIZER),
              resourceVersion: uj.metadata.resourceVersion,
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
    } catch (err) {
      const code = apiStatus(err)
      if (code === 404) return
      if (code === 409) throw new Error('the UtilityJob changed while its finalizer was being removed; trying again')
      throw err
    }
    if (!isTerminal(uj))
      log.warn({ state: effectiveStatus(uj).state }, 'job deleted before it finished: recorded as lost')
  }

  private podsOf(uj: UtilityJobResource): V1Pod[] {
    return this.d.pods.list(this.d.namespace).filter((p) => p.metadata?.labels?.[LABELS.jobId] === uj.metadata.name)
  }

  private coords() {
    return { group: API_GROUP, version: API_VERSION, namespace: this.d.namespace, plural: UTILITY_JOB.plural }
  }

  private async deleteJob(name: string, log: Logger, why = 'cancelled'): Promise<void> {
    try {
      await this.d.batch.deleteNamespacedJob({ name, namespace: this.d.namespace, propagationPolicy: 'Background' })
      log.info({ job: name, why }, 'job deleted')
    } catch (err) {
      if (apiStatus(err) !== 404) throw err
    }
  }

  private async writeStatus(
    uj: UtilityJobResource,
    status: UtilityJobStatus,
    log: Logger,
    opts: { admitted?: boolean } = {},
  ): Promise<void> {
    // status.callback belongs to the callback controller: carried over as it is, never rebuilt.
    const callback = uj.status?.callback
    const jobName = jobNameFor(uj)
    const previous = uj.status?.conditions
    const admitted =
      opts.admitted ||
      wasAdmitted(previous) ||
      status.state === 'running' ||
      status.state === 'succeeded' ||
      this.d.jobs.get(jobName, this.d.namespace) !== undefined
    const conditions = nextConditions({
      status,
      previous,
      admitted,
      jobName,
      utility: uj.spec.utility,
      generation: uj.metadata.generation,
      now: this.now(),
    })
    const body = {
      ...uj,
      status: {
        ...status,
        ...(callback ? { callback } : {}),
        jobName,
        observedGeneration: uj.metadata.generation,
        conditions,
      },
    }
    this.d.fence?.()
    // Row first, status second: the list (the record) never shows an older state than the detail.
    // The row keeps every output file; the status only what fits its budget (contract/status-budget.ts).
    await this.d.records.transition(body)
    const bounded = { ...body, status: boundedStatus(body.status) }
    if (bounded.status !== body.status)
      log.info(
        { files: status.result?.files.length, inStatus: bounded.status.result?.files.length },
        'result files beyond the status budget kept in the job record only',
      )
    // Again before the second write: the replica may have been paused while the row was written.
    this.d.fence?.()
    const saved = (await this.d.custom.replaceNamespacedCustomObjectStatus({
      ...this.coords(),
      name: uj.metadata.name,
      body: bounded,
    })) as UtilityJobResource
    this.written.set(uj.metadata.name, Number(saved.metadata.resourceVersion))
    log.info({ state: status.state, errorCode: status.error?.code }, 'status written')
    const before = effectiveStatus(uj).state
    if (before !== status.state) {
      const event = transitionEvent(status, jobName)
      if (event) this.d.events?.record(uj, event)
    }
    if (isTerminal({ ...uj, status })) this.d.onFinished?.(uj, status)
  }
}

/** The Event for a job entering `status.state` (null for queued: JobCreated tells that story). */
export function transitionEvent(status: UtilityJobStatus, jobName: string): JobEvent | null {
  switch (status.state) {
    case 'queued':
      return null
    case 'running':
      return { type: 'Normal', reason: 'Started', action: 'Start', note: `The runner of batch Job ${jobName} started.` }
    case 'succeeded': {
      const n = status.result?.files.length ?? 0
      return {
        type: 'Normal',
        reason: 'Succeeded',
        action: 'Complete',
        note: `Succeeded in ${status.timings.totalMs} ms: ${n === 1 ? '1 file' : `${n} files`} stored.`,
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
