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
import type { CallbackDelivery, JobError, UtilityJobResource, UtilityJobStatus } from '../contract/crd-schemas.js'
import { effectiveStatus, isTerminal, type JobRecord, traceparentOfJob } from '../contract/job-view.js'
import { apiStatus } from '../platform/kube.js'
import { context, contextOf, failSpan, inSpan, jobAttributes, pastSpan } from '../platform/tracing.js'
import {
  MAX_PROGRESS_BYTES,
  POOL_RUNNER_LOST,
  type PoolJobState,
  progressObjectKey,
} from '../contract/runner-protocol.js'
import { JsonBoundError } from '../platform/bounded-json.js'
import { readJsonObject } from '../platform/storage-client.js'
import { parseTime } from '../contract/time.js'
import { deadlineSeconds, desiredJob, jobNameFor, type RunnerSettings } from './desired-job.js'
import {
  admittedSyncStatus,
  cancelledStatus,
  cancelWanted,
  failedStatus,
  progressUpdate,
  runningStatus,
  succeededStatus,
} from './next-status.js'
import { firstPodStart, observeJob } from './observe-job.js'
import { judgeManifest, readResultManifest, RESULT_NOT_ACCEPTED } from './result-manifest.js'
import { boundedStatus } from '../contract/status-budget.js'
import { type Admission, tenantOf } from './admission.js'
import { poolPodEnded, tenantHash } from './pool-pod.js'
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
    Partial<Pick<Admission, 'finishedEarly' | 'isFinishing' | 'heldBackBy'>>
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

/**
 * The pauses between reads of a young job's result manifest, from its first pass with a batch Job
 * while its pod does not show the runner running yet (about 4 s in all): a small job's runner may
 * start and finish before the kubelet reports it running, and each read that finds nothing is one
 * small request to storage.
 */
export const EARLY_RESULT_READS_MS = [100, 100, 100, 150, 150, 200, 250, 300, 400, 500, 750, 1000] as const

/**
 * The pauses once the pod shows the runner running (the schedule starts again, about 4 s in all,
 * then the pod's status alone): a small job's runner stores its manifest within a few hundred ms
 * of starting, so the first second is read densely.
 */
export const RUNNING_RESULT_READS_MS = [
  50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 100, 100, 100, 100, 100, 200, 200, 200, 200, 200, 500, 500, 500, 500,
] as const

/** Where a young job is in its early reads of the result manifest. */
interface EarlyReads {
  /** The pod showed the runner running: RUNNING_RESULT_READS_MS, else EARLY_RESULT_READS_MS. */
  running: boolean
  reads: number
  /** No more early reads (a manifest over its bounds or refused: the exit decides). */
  stopped: boolean
}

const RUNNING = { state: 'running' } as const

/** How soon a pooled job looks again for an idle pool pod (or at a pod that did not answer). */
const POOL_RETRY_MS = 200
/**
 * How often a pooled job that counts no progress is looked at while it runs: its end comes
 * through its pod's answer to a long poll; this is for its time limit, and a poll that failed.
 */
const POOL_RECHECK_MS = 5_000
/** How long past a pooled job's time limit its runner has to end it before the operator deletes the pod. */
export const POOL_DEADLINE_GRACE_MS = 10_000

/** How often a running job's progress is read from storage (its runner writes it at most once a second). */
export const PROGRESS_POLL_MS = 2_000

/** Whether the job record's finalizer holds the UtilityJob until its final row is written. */
function hasRecordFinalizer(uj: UtilityJobResource): boolean {
  return (uj.metadata.finalizers ?? []).includes(JOB_RECORD_FINALIZER)
}

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
  /** Early reads of each young job's result manifest made so far (EARLY_RESULT_READS_MS). */
  private readonly earlyReads = new Map<string, EarlyReads>()
  /** UtilityJobs without the record's finalizer whose row this process has written. */
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
      this.earlyReads.delete(name)
      this.d.pools?.forget(name)
      return
    }
    // The pass runs in the job's trace: its spans join it, its log lines carry it.
    return context.with(contextOf(traceparentOfJob(uj)), () => this.reconcileJob(name, uj))
  }

  private async reconcileJob(name: string, uj: UtilityJobResource): Promise<{ requeueAfterMs?: number } | void> {
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
    if (isTerminal(uj)) {
      this.earlyReads.delete(name)
      // Its pool pod (pool mode) is free again: jobs waiting for one look again.
      if (uj.status?.runnerPod) this.d.pools?.released(name, uj.spec.utility)
      // Finished from its stored result: its slot frees once its pod shows the runner exited.
      if (this.d.admission.isFinishing?.(name)) this.d.admission.schedule()
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
    // Pool mode: a job on a pool pod stays there; a new one goes to the pool (a Job made before
    // the utility was pooled runs on).
    const pools = this.d.pools
    if (pools && (uj.status?.runnerPod || pools.holds(uj) || (!job && pools.poolOf(utility.slug))))
      return this.reconcilePooled(uj, utility, deadline, pools, log)
    const pods = this.podsOf(uj)
    if (cancelWanted(uj, this.d.keyRevoked) && effectiveStatus(uj).state === 'queued' && firstPodStart(pods) === null) {
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
    // While its Job is young, the runner's result manifest is read on a short schedule: a small
    // job finishes when its manifest is stored, not when the kubelet reports the exit (ADR 0024).
    let soon: number | undefined
    if (obs.kind === 'pending' || obs.kind === 'running') {
      let early = this.earlyReads.get(name) ?? { running: false, reads: 0, stopped: false }
      // The runner shows running: its manifest is near, read densely from here.
      if (obs.kind === 'running' && !early.running) early = { ...early, running: true, reads: 0 }
      const schedule = early.running ? RUNNING_RESULT_READS_MS : EARLY_RESULT_READS_MS
      this.earlyReads.set(name, early)
      if (!early.stopped && early.reads < schedule.length) {
        early.reads++
        if (await this.finishOnStoredResult(uj, utility.runner.progressUnit, firstPodStart(pods), log)) return
        soon = schedule[early.reads - 1]
      }
    }
    switch (obs.kind) {
      case 'pending':
        return earliest(soon)
      case 'image-pull-waiting':
        return { requeueAfterMs: obs.recheckInMs }
      case 'running': {
        let status = uj.status?.state !== 'running' ? runningStatus(uj, obs.podStartedAt, this.now()) : null
        const unit = utility.runner.progressUnit
        if (!unit) {
          if (status) await this.writeStatus(uj, status, log)
          return earliest(soon)
        }
        const report = await this.progressReport(uj)
        if (report instanceof JsonBoundError)
          return this.refuseRunnerOutput(uj, 'progress report', report, obs.podStartedAt, log)
        const progress = progressUpdate(uj.status?.progress, report, unit)
        if (progress) status = { ...(status ?? effectiveStatus(uj)), progress }
        if (status) await this.writeStatus(uj, status, log)
        return earliest(soon, PROGRESS_POLL_MS)
      }
      case 'failed':
        await this.writeStatus(uj, failedStatus(uj, obs.error, obs.podStartedAt, this.now()), log)
        // A Job that would try again (an OOM kill) or wait on (an image it cannot pull) goes:
        // after the status, so a failed delete never leaves the job without a terminal state.
        if (obs.stopJob) await this.deleteJob(jobNameFor(uj), log, obs.error.code)
        return
      case 'succeeded': {
        const read = await inSpan('check result', { attributes: jobAttributes(uj.spec) }, async (span) => {
          const r = await readResultManifest(this.d.storage, this.d.bucket, uj, obs.finishedAt, this.now())
          span.setAttribute('dutil.result.outcome', r.outcome)
          if (r.outcome === 'accepted') span.setAttribute('dutil.result.files', r.result.files.length)
          return r
        })
        const verdict = judgeManifest(read, log)
        if ('retryInMs' in verdict) return { requeueAfterMs: verdict.retryInMs }
        if ('result' in verdict)
          return this.writeStatus(
            uj,
            succeededStatus(uj, verdict.result, obs.podStartedAt, this.now(), utility.runner.progressUnit),
            log,
          )
        await this.writeStatus(uj, failedStatus(uj, verdict.error, obs.podStartedAt, this.now()), log)
        if (verdict.overBound) await this.deleteJob(jobNameFor(uj), log, 'runner output refused')
        return
      }
    }
  }

  /**
   * A job of a pooled utility (docs/adr/0026-runner-pools.md). Queued, it waits for admission as
   * in job mode and is then handed to an idle pool pod; on its pod, the pod's account of the job
   * decides (the result manifest is read and checked as in job mode); its pod gone, or past its
   * time limit and the grace the runner has to end it, it fails.
   */
  private async reconcilePooled(
    uj: UtilityJobResource,
    utility: NonNullable<ReturnType<typeof catalog.get>>,
    deadline: number,
    pools: RunnerPools,
    log: Logger,
  ): Promise<{ requeueAfterMs?: number } | void> {
    const name = uj.metadata.name
    const status = effectiveStatus(uj)
    const pod = pools.podOf(uj)
    const startedAt = parseTime(status.startedAt)
    // Every status written from here names the pod; a finished job gives it back.
    const finish = async (next: UtilityJobStatus) => {
      await this.writeStatus(uj, pod ? { ...next, runnerPod: pod.metadata!.name! } : next, log)
      pools.released(name, utility.slug)
    }
    const fail = (error: JobError) => finish(failedStatus(uj, error, startedAt, this.now()))
    const ended = async (answer: PoolJobState) => {
      if (answer.state === 'failed') return fail(answer.failure!)
      const verdict = judgeManifest(
        await readResultManifest(this.d.storage, this.d.bucket, uj, this.now(), this.now()),
        log,
      )
      if ('retryInMs' in verdict) return { requeueAfterMs: verdict.retryInMs }
      if ('error' in verdict) return fail(verdict.error)
      return finish(succeededStatus(uj, verdict.result, startedAt, this.now(), utility.runner.progressUnit))
    }
    // Its pod told its end already (and may have exited since, a retiring pod does).
    const told = pools.endedState(name)
    if (told && uj.status?.runnerPod) return ended(told)
    if (!pod) {
      // Its pod is gone (deleted, evicted, lost with its node) before the job finished.
      if (status.state === 'running' || uj.status?.runnerPod) return fail(POOL_RUNNER_LOST)
      if (cancelWanted(uj, this.d.keyRevoked)) return this.writeStatus(uj, cancelledStatus(uj, this.now()), log)
      if (!this.d.admission.mayStart(uj)) {
        if (uj.spec.mode === 'sync' && !uj.status?.state && this.d.admission.wasHeld(name))
          await this.writeStatus(uj, status, log)
        this.d.admission.schedule()
        return
      }
      const claimed = await pools.claim(utility.slug, name, tenantHash(tenantOf(uj.spec)))
      // Every pod busy or starting (admission counts the pool's size): woken when one is free.
      if (!claimed) return { requeueAfterMs: POOL_RETRY_MS }
      return this.handToPod(uj, utility, deadline, claimed, pools, log)
    }
    const handed = Boolean(uj.status?.runnerPod)
    if (poolPodEnded(pod)) {
      if (!handed) return this.handBack(uj, pod, pools, log)
      return fail(POOL_RUNNER_LOST)
    }
    // A job whose pod is to answer when it ends runs on: no need to ask.
    const answer = handed && pools.watches(name, pod) ? RUNNING : await pools.client.state(pod, uj.spec.jobId)
    if (answer === 'unreachable' && !handed) return this.handBack(uj, pod, pools, log)
    if (answer === 'unknown') {
      // Not handed over yet (or this process stopped in between): hand it over now. A pod that
      // was handed the job and does not know it has lost it (pod names are never reused).
      if (!handed) return this.handToPod(uj, utility, deadline, pod, pools, log)
      return fail(POOL_RUNNER_LOST)
    }
    if (answer === 'unreachable' || answer.state === 'running') {
      if (!handed) return this.writeHandedStatus(uj, pod, log)
      const limit = (startedAt ?? this.now()) + deadline * 1000 + POOL_DEADLINE_GRACE_MS
      if (handed && this.now() > limit) {
        // The runner did not end the job at its deadline (or does not answer): its pod goes.
        await pools.remove(pod, 'job past its time limit')
        return fail({
          code: 'upstream_timeout',
          message: `The utility did not finish within its time limit of ${deadline} s.`,
        })
      }
      // Its pod answers when the job ends (a long poll, which queues this job); meanwhile the
      // job is looked at now and then, for its progress and its time limit.
      if (answer !== 'unreachable') pools.watchEnd(name, pod, uj.spec.jobId)
      // Progress, as in job mode: the runner's report copied to the status while the job runs.
      const unit = utility.runner.progressUnit
      const wait = answer === 'unreachable' ? POOL_RETRY_MS : unit ? PROGRESS_POLL_MS : POOL_RECHECK_MS
      if (unit && answer !== 'unreachable') {
        const report = await this.progressReport(uj)
        if (report instanceof JsonBoundError) {
          log.error({ what: 'progress report', bound: report.bound }, 'runner output refused')
          await pools.remove(pod, 'runner output refused')
          return fail(RESULT_NOT_ACCEPTED)
        }
        const progress = progressUpdate(uj.status?.progress, report, unit)
        if (progress) await this.writeStatus(uj, { ...status, progress, runnerPod: pod.metadata!.name! }, log)
      }
      return { requeueAfterMs: Math.min(wait, Math.max(0, limit - this.now()) + 10) }
    }
    return ended(answer)
  }

  /** Hands a job to a pool pod it has claimed: its own storage credentials, its deadline. */
  private async handToPod(
    uj: UtilityJobResource,
    utility: NonNullable<ReturnType<typeof catalog.get>>,
    deadline: number,
    pod: V1Pod,
    pools: RunnerPools,
    log: Logger,
  ): Promise<{ requeueAfterMs?: number } | void> {
    const admittedAt = Date.now()
    const podName = pod.metadata!.name!
    this.d.fence?.()
    const answer = await inSpan('hand to pool pod', { attributes: jobAttributes(uj.spec) }, async () => {
      const credentials = await this.d.issueCredentials(uj, utility)
      return pools.client.assign(pod, {
        jobId: uj.spec.jobId,
        utility: utility.slug,
        createdAt: uj.spec.createdAt,
        tenant: tenantHash(tenantOf(uj.spec)),
        deadlineSeconds: deadline,
        credentials,
      })
    })
    if (answer !== 'taken') {
      log.warn({ pod: podName, answer }, 'pool pod did not take the job; trying another')
      // A retiring pod takes no job again: it goes now rather than when it exits.
      if (answer === 'retired') await pools.remove(pod, 'retiring')
      return this.handBack(uj, pod, pools, log)
    }
    log.info({ pod: podName, deadlineSeconds: deadline }, 'job handed to pool pod')
    pools.watchEnd(uj.metadata.name, pod, uj.spec.jobId)
    admissionWaitSpan(uj, admittedAt)
    this.d.events?.record(uj, {
      type: 'Normal',
      reason: 'PoolPodAssigned',
      action: 'Assign',
      note: `Handed to pool runner pod ${podName} (time limit ${deadline} s).`,
      related: { apiVersion: 'v1', kind: 'Pod', name: podName, uid: pod.metadata?.uid },
    })
    return this.writeHandedStatus(uj, pod, log)
  }

  /** The job runs on its pool pod from here, sync or async; the status names the pod. */
  private async writeHandedStatus(uj: UtilityJobResource, pod: V1Pod, log: Logger): Promise<void> {
    const waited = uj.status?.state === 'queued' || this.d.admission.wasHeld(uj.metadata.name)
    const status =
      uj.spec.mode === 'sync' ? admittedSyncStatus(uj, waited, this.now()) : runningStatus(uj, this.now(), this.now())
    await this.writeStatus(uj, { ...status, runnerPod: pod.metadata!.name! }, log, { admitted: true })
  }

  /** A job claimed a pod that will not run it: it goes back to waiting for one (and looks again soon). */
  private handBack(uj: UtilityJobResource, pod: V1Pod, pools: RunnerPools, log: Logger): { requeueAfterMs: number } {
    pools.handBack(uj.metadata.name, pod)
    log.info({ pod: pod.metadata?.name }, 'job handed back to the pool')
    return { requeueAfterMs: POOL_RETRY_MS }
  }

  /**
   * The runner may have stored its result manifest before the kubelet reports its exit: the job
   * succeeds now if the manifest reads and checks as it would after the exit. Anything else (not
   * there yet, unreadable, over its bounds, refused) leaves the decision to the pod's status.
   */
  private async finishOnStoredResult(
    uj: UtilityJobResource,
    progressUnit: string | undefined,
    podStartedAt: number | null,
    log: Logger,
  ): Promise<boolean> {
    const readAt = Date.now()
    const read = await readResultManifest(this.d.storage, this.d.bucket, uj, this.now(), this.now())
    // A manifest over its bounds or refused is not read again early: the exit decides its fate.
    if (read.outcome === 'over-bound' || read.outcome === 'refused') {
      const early = this.earlyReads.get(uj.metadata.name)
      if (early) early.stopped = true
    }
    if (read.outcome !== 'accepted') return false
    log.info('result manifest stored: finishing before the runner exit is reported')
    pastSpan('check result', {
      startTime: readAt,
      attributes: {
        ...jobAttributes(uj.spec),
        'dutil.result.outcome': 'accepted',
        'dutil.result.files': read.result.files.length,
        'dutil.result.early': true,
      },
    })
    this.d.admission.finishedEarly?.(uj.metadata.name)
    await this.writeStatus(uj, succeededStatus(uj, read.result, podStartedAt, this.now(), progressUnit), log)
    return true
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
    await this.writeStatus(uj, failedStatus(uj, RESULT_NOT_ACCEPTED, podStartedAt, this.now()), log)
    await this.deleteJob(jobNameFor(uj), log, 'runner output refused')
  }

  private async createJob(
    uj: UtilityJobResource,
    utility: NonNullable<ReturnType<typeof catalog.get>>,
    log: Logger,
  ): Promise<void> {
    const admittedAt = Date.now()
    // Its own temporary storage credentials; made only when the Job is about to be created.
    this.d.fence?.()
    const made = await inSpan('create batch Job', { attributes: jobAttributes(uj.spec) }, async (span) => {
      const asked = performance.now()
      const credentials = await this.d.issueCredentials(uj, utility)
      const credentialsMs = Math.round(performance.now() - asked)
      const body = desiredJob(uj, utility, this.d.runner, credentials)
      span.setAttribute('dutil.job.deadline_seconds', body.spec!.activeDeadlineSeconds!)
      this.d.fence?.()
      try {
        const created = await this.d.batch.createNamespacedJob({ namespace: this.d.namespace, body })
        log.info(
          { job: body.metadata!.name, deadlineSeconds: body.spec!.activeDeadlineSeconds, credentialsMs },
          'job created',
        )
        return { created, body }
      } catch (err) {
        if (apiStatus(err) === 409) return null // AlreadyExists: an earlier pass (or another replica) made it.
        throw err
      }
    })
    if (!made) return
    const { created, body } = made
    admissionWaitSpan(uj, admittedAt)
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
    if (!hasRecordFinalizer(uj)) await this.archive(uj)
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
    if (this.d.podsOf) return this.d.podsOf(uj.metadata.name)
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

  /**
   * Writes the status the pass decided, in four steps: the status with its bookkeeping (a pure
   * function), the job's row, the status subresource, then what follows a change of state.
   */
  private async writeStatus(
    uj: UtilityJobResource,
    status: UtilityJobStatus,
    log: Logger,
    opts: { admitted?: boolean } = {},
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
    this.announce(uj, status)
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
    const saved = (await this.d.custom.replaceNamespacedCustomObjectStatus({
      ...this.coords(),
      name: body.metadata.name,
      body: bounded,
    })) as UtilityJobResource
    this.written.set(body.metadata.name, Number(saved.metadata.resourceVersion))
  }

  /** After a status write: the Event of a change of state, and a finished job's bookkeeping. */
  private announce(uj: UtilityJobResource, status: UtilityJobStatus): void {
    if (effectiveStatus(uj).state !== status.state) {
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
  const admitted = o.admitted || wasAdmitted(previous) || status.state === 'running' || status.state === 'succeeded'
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
