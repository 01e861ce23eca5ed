import type { V1Pod } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { effectiveStatus } from '../contract/job-view.js'
import { POOL_RUNNER_LOST, type PoolJobState } from '../contract/runner-protocol.js'
import { parseTime } from '../contract/time.js'
import type { UtilityDefinition } from '../contract/utility.js'
import { inSpan, jobAttributes } from '../platform/tracing.js'
import { tenantOf } from '../contract/tenants.js'
import { poolPodEnded, tenantHash } from './pool-pod.js'
import type { RunBackend, RunObservation, RunStart } from './run-backend.js'
import type { JobEvent } from './events.js'
import { credentialsOrRefusal, type IssueCredentials } from './runner-credentials.js'
import type { RunnerPools } from './runner-pools.js'

/** How soon a pooled job looks again for an idle pool pod (or at a pod that did not answer). */
export const POOL_RETRY_MS = 200
/**
 * How often a pooled job is looked at while it runs: its end comes through its pod's answer to a
 * long poll; this is for its time limit, and a poll that failed.
 */
export const POOL_RECHECK_MS = 5_000
/** How long past a pooled job's time limit its runner has to end it before the operator deletes the pod. */
export const POOL_DEADLINE_GRACE_MS = 10_000

export interface PoolRunDeps {
  pools: RunnerPools
  issueCredentials: IssueCredentials
  fence?: () => void
  now: () => number
}

/**
 * How long a pooled job runs before its status says so (docs/adr/0035): a job that ends sooner
 * costs the API server one status write, its outcome, and one Event.
 */
export const RUNNING_STATUS_AFTER_MS = 1_000

/** The Event of a job handed to pool pod `pod`. */
function handedEvent(pod: V1Pod, deadline: number): JobEvent {
  const name = pod.metadata!.name!
  return {
    type: 'Normal',
    reason: 'PoolPodAssigned',
    action: 'Assign',
    note: `Handed to pool runner pod ${name}, which runs it from now (time limit ${deadline} s).`,
    related: { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata?.uid },
  }
}

const LOST = (startedAt: number | null, runner?: string): RunObservation => ({
  kind: 'failed',
  error: POOL_RUNNER_LOST,
  startedAt,
  runner,
})

/**
 * Pool mode (docs/adr/0026-runner-pools.md): a job is handed to a warm pool pod of its tenant
 * (or a generic one, bound to the tenant from then on). The pod's own account of the job (asked,
 * or told at its end through a long poll) tells how the run goes; the pod gone, or past the
 * job's time limit and the grace the runner has to end it, the job fails.
 */
export class PoolRun implements RunBackend {
  constructor(private readonly d: PoolRunDeps) {}

  begun(uj: UtilityJobResource): boolean {
    return this.d.pools.holds(uj)
  }

  async observe(
    uj: UtilityJobResource,
    _utility: UtilityDefinition,
    deadline: number,
    log: Logger,
  ): Promise<RunObservation> {
    const pools = this.d.pools
    const name = uj.metadata.name
    const status = effectiveStatus(uj)
    // Handed over: its status names the pod, or this process handed it (its status says so later, if at all).
    const pod = pools.podOf(uj) ?? (await pools.adopt(uj, tenantHash(tenantOf(uj.spec)), this.d.now()))
    const takenAt = pools.takenAt(name)
    const startedAt = parseTime(status.startedAt) ?? takenAt ?? null
    const handed = Boolean(uj.status?.runnerPod) || takenAt !== undefined
    // Its pod told its end already (and may have exited since, a retiring pod does).
    const told = pools.endedState(name)
    if (told && handed) return this.ended(told, startedAt, pools.podNameOf(uj))
    // Its pod is gone (deleted, evicted, lost with its node) before the job finished.
    if (!pod) return status.state === 'running' || handed ? LOST(startedAt, pools.podNameOf(uj)) : { kind: 'none' }
    const runner = pod.metadata!.name!
    if (poolPodEnded(pod)) return handed ? LOST(startedAt, runner) : this.handBack(uj, pod, log)
    // A job whose pod is to answer when it ends runs on: no need to ask.
    const answer =
      handed && pools.watches(name, pod)
        ? ({ state: 'running' } as const)
        : await pools.client.state(pod, uj.spec.jobId)
    if (answer === 'unreachable' && !handed) return this.handBack(uj, pod, log)
    // Not handed over yet (or this process stopped in between): it is handed over now. A pod that
    // was handed the job and does not know it has lost it (pod names are never reused).
    if (answer === 'unknown') return handed ? LOST(startedAt, runner) : { kind: 'none' }
    if (answer !== 'unreachable' && answer.state !== 'running') return this.ended(answer, startedAt, runner)
    if (!handed) return { kind: 'started', running: true, runner }
    const limit = (startedAt ?? this.d.now()) + deadline * 1000 + POOL_DEADLINE_GRACE_MS
    if (this.d.now() > limit)
      // The runner did not end the job at its deadline (or does not answer): its pod goes.
      return {
        kind: 'failed',
        error: {
          code: 'upstream_timeout',
          message: `The utility did not finish within its time limit of ${deadline} s.`,
        },
        startedAt,
        stop: 'job past its time limit',
      }
    // Its pod answers when the job ends (a long poll, which queues this job); meanwhile the job
    // is looked at now and then, for its progress and its time limit.
    if (answer !== 'unreachable') pools.watchEnd(name, pod, uj.spec.jobId)
    const since = startedAt ?? this.d.now()
    return {
      kind: 'running',
      startedAt: since,
      recheckInMs: Math.min(
        answer === 'unreachable' ? POOL_RETRY_MS : POOL_RECHECK_MS,
        Math.max(0, limit - this.d.now()) + 10,
      ),
      progress: answer !== 'unreachable',
      runner,
      // Its status does not name its pod yet: it is told once the job has run a while.
      ...(uj.status?.runnerPod
        ? {}
        : { quiet: { until: since + RUNNING_STATUS_AFTER_MS, event: handedEvent(pod, deadline) } }),
    }
  }

  /** The job's end as its pod told it: failed as the runner classified it, or succeeded (its manifest decides). */
  private ended(
    answer: PoolJobState,
    startedAt: number | null,
    runner?: string,
  ): Extract<RunObservation, { kind: 'failed' | 'succeeded' }> {
    if (answer.state === 'failed')
      return { kind: 'failed', error: answer.failure ?? POOL_RUNNER_LOST, startedAt, runner }
    return {
      kind: 'succeeded',
      startedAt,
      finishedAt: this.d.now(),
      runner,
      ...(answer.result !== undefined ? { answered: answer.result } : {}),
    }
  }

  /** A job claimed a pod that will not run it: it goes back to waiting for one (and looks again soon). */
  private handBack(uj: UtilityJobResource, pod: V1Pod, log: Logger): { kind: 'wait'; recheckInMs: number } {
    this.d.pools.handBack(uj.metadata.name, pod)
    log.info({ pod: pod.metadata?.name }, 'job handed back to the pool')
    return { kind: 'wait', recheckInMs: POOL_RETRY_MS }
  }

  /** Hands the job to the pod it claimed (else claims one): its own storage credentials, its deadline. */
  async start(uj: UtilityJobResource, utility: UtilityDefinition, deadline: number, log: Logger): Promise<RunStart> {
    const pools = this.d.pools
    const tenant = tenantHash(tenantOf(uj.spec))
    const pod = pools.podOf(uj) ?? (await pools.claim(utility.slug, uj.metadata.name, tenant))
    if (!pod)
      // A pool full of pods that other tenants use: the job runs as a batch Job. Else every pod
      // is busy or starting (admission counts the pool's size): woken when one is free.
      return pools.room(utility.slug, uj.metadata.name, tenant) === 'job'
        ? { kind: 'job' }
        : { kind: 'wait', recheckInMs: POOL_RETRY_MS }
    const podName = pod.metadata!.name!
    this.d.fence?.()
    const answer = await inSpan('hand to pool pod', { attributes: jobAttributes(uj.spec) }, async () => {
      const credentials = await credentialsOrRefusal(this.d.issueCredentials, uj, utility)
      if ('refused' in credentials) return credentials
      return pools.client.assign(pod, {
        jobId: uj.spec.jobId,
        utility: utility.slug,
        createdAt: uj.spec.createdAt,
        tenant,
        deadlineSeconds: deadline,
        credentials,
        ...(uj.spec.sealedInput ? { sealedInput: uj.spec.sealedInput } : {}),
      })
    })
    if (typeof answer === 'object') {
      // Never handed anything: the pod is free for the tenant's next job at once.
      pools.handBack(uj.metadata.name, pod)
      log.warn({ pod: podName, err: answer.refused.message }, 'storage grant refused: the job fails')
      return { kind: 'refused', error: answer.refused }
    }
    if (answer !== 'taken') {
      log.warn({ pod: podName, answer }, 'pool pod did not take the job; trying another')
      // A retiring pod takes no job again: it goes now rather than when it exits.
      if (answer === 'retired') await pools.remove(pod, 'retiring')
      return this.handBack(uj, pod, log)
    }
    log.info({ pod: podName, deadlineSeconds: deadline }, 'job handed to pool pod')
    pools.tookOver(uj.metadata.name, this.d.now())
    pools.watchEnd(uj.metadata.name, pod, uj.spec.jobId)
    return { kind: 'started', running: true, runner: podName, event: handedEvent(pod, deadline), quiet: true }
  }

  /** The job's pod goes (a runner past its limit, or one whose output was refused). */
  async stop(uj: UtilityJobResource, why: string): Promise<void> {
    const pod = this.d.pools.podOf(uj)
    if (pod) await this.d.pools.remove(pod, why)
  }

  release(uj: UtilityJobResource): void {
    this.d.pools.released(uj.metadata.name, uj.spec.utility)
  }

  /** A finished job's pod was given back when it finished; one this process still counts as held is given back now. */
  async settle(uj: UtilityJobResource): Promise<number | undefined> {
    if (this.d.pools.keeps(uj.metadata.name)) this.release(uj)
    return undefined
  }

  forget(name: string): void {
    this.d.pools.forget(name)
  }
}
