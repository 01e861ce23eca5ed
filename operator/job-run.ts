import type { BatchV1Api, ObjectCache, V1Job, V1Pod } from '@kubernetes/client-node'
import type { Client } from 'minio'
import type { Logger } from 'pino'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { effectiveStatus } from '../contract/job-view.js'
import { parseTime } from '../contract/time.js'
import type { UtilityDefinition } from '../contract/utility.js'
import { apiStatus } from '../platform/kube.js'
import { inSpan, jobAttributes, pastSpan } from '../platform/tracing.js'
import { desiredJob, jobNameFor, type RunnerSettings } from './desired-job.js'
import { firstPodStart, observeJob } from './observe-job.js'
import { readResultManifest } from './result-manifest.js'
import type { RunBackend, RunObservation, RunStart } from './run-backend.js'
import { credentialsOrRefusal, type IssueCredentials } from './runner-credentials.js'

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

/** Where a young job is in its early reads of the result manifest. */
interface EarlyReads {
  /** The pod showed the runner running: RUNNING_RESULT_READS_MS, else EARLY_RESULT_READS_MS. */
  running: boolean
  reads: number
  /** No more early reads (a manifest over its bounds or refused: the exit decides). */
  stopped: boolean
}

export interface JobRunDeps {
  namespace: string
  jobs: ObjectCache<V1Job>
  /** The pods of a UtilityJob's batch Job. */
  podsOf: (uj: UtilityJobResource) => V1Pod[]
  batch: Pick<BatchV1Api, 'createNamespacedJob' | 'deleteNamespacedJob'>
  storage: Client
  bucket: string
  issueCredentials: IssueCredentials
  runner: RunnerSettings
  fence?: () => void
  now: () => number
  imagePullGraceMs?: number
  failedJobGraceMs?: number
  /**
   * Whether jobs of this utility wait for a slot: early reads then buy nothing (a job that finishes
   * early keeps its slot until its runner's exit anyway) and cost the operator and storage CPU the
   * busy node lacks, so the exit decides.
   */
  slotsWanted?: (utility: string) => boolean
  /** The job finished from its stored result before its runner's exit was seen (its slot frees at the exit). */
  finishedEarly?: (name: string) => void
}

/**
 * Job mode: each job runs in a batch Job of its own (docs/adr/0004), its time limit the Job's
 * `activeDeadlineSeconds`. The Job and its pods, and the runner's result manifest while the Job
 * is young (ADR 0024), tell how the run goes.
 */
export class JobRun implements RunBackend {
  /** Early reads of each young job's result manifest made so far (EARLY_RESULT_READS_MS). */
  private readonly earlyReads = new Map<string, EarlyReads>()

  constructor(private readonly d: JobRunDeps) {}

  begun(uj: UtilityJobResource): boolean {
    return firstPodStart(this.d.podsOf(uj)) !== null
  }

  async observe(
    uj: UtilityJobResource,
    _utility: UtilityDefinition,
    deadline: number,
    log: Logger,
  ): Promise<RunObservation> {
    const job = this.d.jobs.get(jobNameFor(uj), this.d.namespace)
    if (!job) {
      const status = effectiveStatus(uj)
      const started = parseTime(status.startedAt)
      if (
        status.state === 'running' &&
        uj.spec.mode === 'async' &&
        started !== null &&
        this.d.now() > started + deadline * 1000
      )
        // Its Job vanished (deleted, or lost with its node) and the time limit has passed.
        return {
          kind: 'failed',
          error: { code: 'lost', message: 'The job was interrupted and ran past its time limit.' },
          startedAt: null,
        }
      return { kind: 'none' }
    }
    if (job.metadata?.ownerReferences?.[0]?.uid !== uj.metadata.uid) {
      log.warn({ job: job.metadata?.name }, 'a Job with this name belongs to another object; waiting')
      return { kind: 'wait', recheckInMs: 5000 }
    }
    const pods = this.d.podsOf(uj)
    const obs = observeJob(job, pods, deadline, {
      imagePullGraceMs: this.d.imagePullGraceMs ?? 60_000,
      now: this.d.now(),
    })
    // While its Job is young, the runner's result manifest is read on a short schedule: a small
    // job finishes when its manifest is stored, not when the kubelet reports the exit (ADR 0024).
    let soon: number | undefined
    if (obs.kind === 'pending' || obs.kind === 'running') {
      const name = uj.metadata.name
      let early = this.earlyReads.get(name) ?? { running: false, reads: 0, stopped: false }
      // The runner shows running: its manifest is near, read densely from here.
      if (obs.kind === 'running' && !early.running) early = { ...early, running: true, reads: 0 }
      const schedule = early.running ? RUNNING_RESULT_READS_MS : EARLY_RESULT_READS_MS
      this.earlyReads.set(name, early)
      if (!early.stopped && early.reads < schedule.length && !this.d.slotsWanted?.(uj.spec.utility)) {
        early.reads++
        const stored = await this.storedResult(uj, early, log)
        if (stored) return { ...stored, startedAt: firstPodStart(pods) }
        soon = schedule[early.reads - 1]
      }
    }
    switch (obs.kind) {
      case 'pending':
        return { kind: 'wait', recheckInMs: soon }
      case 'start-failure-waiting':
      case 'failure-unseen':
        return { kind: 'wait', recheckInMs: obs.recheckInMs }
      case 'running':
        return { kind: 'running', startedAt: obs.podStartedAt, recheckInMs: soon, progress: true }
      case 'failed':
        // A Job that would try again (an OOM kill) or wait on (an image it cannot pull) goes.
        return {
          kind: 'failed',
          error: obs.error,
          startedAt: obs.podStartedAt,
          stop: obs.stopJob ? obs.error.code : undefined,
        }
      case 'succeeded':
        return { kind: 'succeeded', startedAt: obs.podStartedAt, finishedAt: obs.finishedAt }
    }
  }

  /**
   * The runner may have stored its result manifest before the kubelet reports its exit: the job
   * succeeds now if the manifest reads and checks as it would after the exit. Anything else (not
   * there yet, unreadable, over its bounds, refused) leaves the decision to the pod's status.
   */
  private async storedResult(
    uj: UtilityJobResource,
    early: EarlyReads,
    log: Logger,
  ): Promise<Omit<Extract<RunObservation, { kind: 'succeeded' }>, 'startedAt'> | null> {
    const readAt = Date.now()
    const read = await readResultManifest(this.d.storage, this.d.bucket, uj, this.d.now(), this.d.now())
    // A manifest over its bounds or refused is not read again early: the exit decides its fate.
    if (read.outcome === 'over-bound' || read.outcome === 'refused') early.stopped = true
    if (read.outcome !== 'accepted') return null
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
    this.d.finishedEarly?.(uj.metadata.name)
    return { kind: 'succeeded', finishedAt: this.d.now(), stored: read.result }
  }

  async start(uj: UtilityJobResource, utility: UtilityDefinition, _deadline: number, log: Logger): Promise<RunStart> {
    // Its own temporary storage credentials; made only when the Job is about to be created.
    this.d.fence?.()
    const made = await inSpan('create batch Job', { attributes: jobAttributes(uj.spec) }, async (span) => {
      const asked = performance.now()
      const credentials = await credentialsOrRefusal(this.d.issueCredentials, uj, utility)
      if ('refused' in credentials) return credentials
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
    if (!made) return { kind: 'wait' }
    if ('refused' in made) {
      log.warn({ err: made.refused.message }, 'storage grant refused: the job fails')
      return { kind: 'refused', error: made.refused }
    }
    const { created, body } = made
    const jobName = body.metadata!.name!
    return {
      kind: 'started',
      // An async job stays queued until its runner starts; a sync job runs from here (its client is waiting).
      running: false,
      event: {
        type: 'Normal',
        reason: 'JobCreated',
        action: 'Create',
        note: `Created batch Job ${jobName} (time limit ${body.spec!.activeDeadlineSeconds} s).`,
        related: { apiVersion: 'batch/v1', kind: 'Job', name: jobName, uid: created.metadata?.uid },
      },
    }
  }

  /** Deletes the job's batch Job by name, whatever the cache says: it may hold a Job created a moment ago. */
  async stop(uj: UtilityJobResource, why: string, log: Logger): Promise<void> {
    const name = jobNameFor(uj)
    try {
      await this.d.batch.deleteNamespacedJob({ name, namespace: this.d.namespace, propagationPolicy: 'Background' })
      log.info({ job: name, why }, 'job deleted')
    } catch (err) {
      if (apiStatus(err) !== 404) throw err
    }
  }

  release(uj: UtilityJobResource): void {
    this.earlyReads.delete(uj.metadata.name)
  }

  /**
   * A cancelled job's Job may have been created a moment before the cancel was seen: it goes. A
   * failed job's Job stays its grace (for `kubectl logs`), then goes.
   */
  async settle(uj: UtilityJobResource, log: Logger): Promise<number | undefined> {
    this.earlyReads.delete(uj.metadata.name)
    const job = this.d.jobs.get(jobNameFor(uj), this.d.namespace)
    if (!job) return undefined
    if (effectiveStatus(uj).state === 'cancelled') await this.stop(uj, 'cancelled', log)
    if (job.metadata?.deletionTimestamp) return undefined
    const at = failedJobRemovableAt(uj, this.d.failedJobGraceMs ?? FAILED_JOB_GRACE_MS)
    if (at === null) return undefined
    if (at > this.d.now()) return at - this.d.now()
    await this.stop(uj, 'failed job recorded', log)
    return undefined
  }

  forget(name: string): void {
    this.earlyReads.delete(name)
  }
}
