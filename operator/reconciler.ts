import type { BatchV1Api, CustomObjectsApi, ObjectCache, V1Job, V1Pod } from '@kubernetes/client-node'
import type { Client } from 'minio'
import type { Logger } from 'pino'
import { API_GROUP, API_VERSION, LABELS, UTILITY_JOB } from '../contract/api-group.js'
import { catalog } from '../contract/catalog.js'
import type { UtilityJobResource, UtilityJobStatus } from '../contract/crd-schemas.js'
import { effectiveStatus, isTerminal } from '../contract/job-view.js'
import { apiStatus } from '../contract/kube.js'
import { resultObjectKey, type RunnerResult } from '../contract/runner-protocol.js'
import { readJsonObject } from '../contract/storage-client.js'
import { parseTime } from '../contract/time.js'
import { deadlineSeconds, desiredJob, jobNameFor, type RunnerSettings } from './desired-job.js'
import { cancelledStatus, failedStatus, runningStatus, succeededStatus } from './next-status.js'
import { firstPodStart, observeJob } from './observe-job.js'
import { storageGrantFor } from './storage-grant.js'

export interface ReconcilerDeps {
  namespace: string
  utilityJobs: ObjectCache<UtilityJobResource>
  jobs: ObjectCache<V1Job>
  pods: ObjectCache<V1Pod>
  batch: BatchV1Api
  custom: CustomObjectsApi
  storage: Client
  /** Signs scoped runners' storage grants; points at the endpoint runners use. */
  presigner?: Client
  bucket: string
  runner: RunnerSettings
  log: Logger
  now?: () => number
  onFinished?: (uj: UtilityJobResource, status: UtilityJobStatus) => void
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

  constructor(private readonly d: ReconcilerDeps) {}

  private now(): number {
    return this.d.now ? this.d.now() : Date.now()
  }

  async reconcile(name: string): Promise<{ requeueAfterMs?: number } | void> {
    const uj = this.d.utilityJobs.get(name, this.d.namespace)
    if (!uj) {
      this.written.delete(name)
      return
    }
    const written = this.written.get(name)
    if (written !== undefined) {
      if (Number(uj.metadata.resourceVersion) < written) return
      this.written.delete(name) // the cache has caught up
    }
    if (uj.metadata.deletionTimestamp) return
    const log = this.d.log.child({ jobId: uj.spec.jobId, utility: uj.spec.utility })
    if (isTerminal(uj)) {
      // A cancelled job's Job may have been created a moment before the cancel was seen.
      if (effectiveStatus(uj).state === 'cancelled' && this.d.jobs.get(jobNameFor(uj), this.d.namespace)) await this.deleteJob(jobNameFor(uj), log)
      return
    }
    const utility = catalog.get(uj.spec.utility)
    if (!utility) {
      await this.writeStatus(uj, failedStatus(uj, { code: 'internal', message: 'This utility is not available.' }, null, this.now()), log)
      return
    }
    const deadline = deadlineSeconds(uj, utility)
    const job = this.d.jobs.get(jobNameFor(uj), this.d.namespace)
    const pods = this.d.pods.list(this.d.namespace).filter((p) => p.metadata?.labels?.[LABELS.jobId] === uj.metadata.name)
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
      if (status.state === 'running' && uj.spec.mode === 'async' && started !== null && this.now() > started + deadline * 1000) {
        // Its Job vanished (deleted, or lost with its node) and the time limit has passed.
        await this.writeStatus(uj, failedStatus(uj, { code: 'lost', message: 'The job was interrupted and ran past its time limit.' }, null, this.now()), log)
        return
      }
      await this.createJob(uj, utility, log)
      return
    }
    if (job.metadata?.ownerReferences?.[0]?.uid !== uj.metadata.uid) {
      log.warn({ job: job.metadata?.name }, 'a Job with this name belongs to another object; waiting')
      return { requeueAfterMs: 5000 }
    }
    const obs = observeJob(job, pods, deadline)
    switch (obs.kind) {
      case 'pending':
        return
      case 'running':
        if (uj.status?.state !== 'running') {
          await this.writeStatus(uj, runningStatus(uj, obs.podStartedAt, this.now()), log)
        }
        return
      case 'failed':
        await this.writeStatus(uj, failedStatus(uj, obs.error, obs.podStartedAt, this.now()), log)
        return
      case 'succeeded': {
        let result: RunnerResult
        try {
          result = await readJsonObject<RunnerResult>(this.d.storage, this.d.bucket, resultObjectKey(uj.spec.jobId))
        } catch (err) {
          log.error({ err }, 'reading the result manifest failed')
          await this.writeStatus(uj, failedStatus(uj, { code: 'storage_error', message: 'The output could not be read back from storage.' }, obs.podStartedAt, this.now()), log)
          return
        }
        await this.writeStatus(uj, succeededStatus(uj, result, obs.podStartedAt, this.now()), log)
        return
      }
    }
  }

  private async createJob(uj: UtilityJobResource, utility: NonNullable<ReturnType<typeof catalog.get>>, log: Logger): Promise<void> {
    const grant =
      utility.runner.storageAccess === 'scoped'
        ? await storageGrantFor(uj, utility, this.d.presigner ?? this.d.storage, this.d.bucket, new Date(this.now()))
        : undefined
    const body = desiredJob(uj, utility, this.d.runner, grant)
    try {
      await this.d.batch.createNamespacedJob({ namespace: this.d.namespace, body })
      log.info({ job: body.metadata!.name, deadlineSeconds: body.spec!.activeDeadlineSeconds }, 'job created')
    } catch (err) {
      if (apiStatus(err) === 409) return // AlreadyExists: an earlier pass (or another replica) made it.
      throw err
    }
  }

  private async deleteJob(name: string, log: Logger): Promise<void> {
    try {
      await this.d.batch.deleteNamespacedJob({ name, namespace: this.d.namespace, propagationPolicy: 'Background' })
      log.info({ job: name }, 'job deleted after cancel')
    } catch (err) {
      if (apiStatus(err) !== 404) throw err
    }
  }

  private async writeStatus(uj: UtilityJobResource, status: UtilityJobStatus, log: Logger): Promise<void> {
    // status.callback belongs to the callback controller: carried over as it is, never rebuilt.
    const callback = uj.status?.callback
    const body = { ...uj, status: { ...status, ...(callback ? { callback } : {}), jobName: jobNameFor(uj), observedGeneration: uj.metadata.generation } }
    const saved = (await this.d.custom.replaceNamespacedCustomObjectStatus({
      group: API_GROUP,
      version: API_VERSION,
      namespace: this.d.namespace,
      plural: UTILITY_JOB.plural,
      name: uj.metadata.name,
      body,
    })) as UtilityJobResource
    this.written.set(uj.metadata.name, Number(saved.metadata.resourceVersion))
    log.info({ state: status.state, errorCode: status.error?.code }, 'status written')
    if (isTerminal({ ...uj, status })) this.d.onFinished?.(uj, status)
  }
}
