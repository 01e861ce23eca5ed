import { BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node'
import type { Client } from 'minio'
import type { Logger } from 'pino'
import { objectNameOf } from '../contract/ids.js'
import { isTerminal } from '../contract/job-view.js'
import { Admission } from './admission.js'
import { CallbackController } from './callbacks/controller.js'
import type { OperatorConfig } from './config.js'
import { jobNameFor } from './desired-job.js'
import type { EventRecorder } from './events.js'
import { observeFinished, type OperatorMetrics } from './metrics.js'
import { runnerAtWork, waitsForNode } from './observe-job.js'
import { httpPoolClient } from './pool-client.js'
import { isPoolPod } from './pool-pod.js'
import { type JobRecordWriter, UtilityJobReconciler } from './reconciler.js'
import { stsAssumeRole, stsCredentialIssuer, tenantCredentialIssuer, withInputKeys } from './runner-credentials.js'
import { UTILITIES } from '../runners/catalog.js'
import { InputSealingKey } from '../platform/input-sealing-key.js'
import { RunnerPools } from './runner-pools.js'
import { UnfinishedJobs } from './unfinished-jobs.js'
import { type OperatorCaches, ownerOf, PodsByOwner } from './watches.js'
import { WorkQueue } from './work-queue.js'

export interface JobControllerDeps {
  kc: KubeConfig
  config: OperatorConfig
  caches: OperatorCaches
  storage: Client
  records: JobRecordWriter
  events: EventRecorder
  metrics: OperatorMetrics
  /** Throws when this replica may no longer act (before every write). */
  fence: () => void
  log: Logger
}

/**
 * The job side of the operator, wired: every change of a UtilityJob, or of a batch Job or runner
 * pod the operator owns, queues its UtilityJob for the reconciler; admission holds each
 * utility's jobs to its slots in fair turns between tenants (docs/adr/0013); the runner pools
 * keep pooled utilities' pods (docs/adr/0026).
 */
export function jobControllers(d: JobControllerDeps) {
  const { config, caches, log } = d
  const ns = config.namespace
  const sealing = InputSealingKey.of(d.kc.makeApiClient(CoreV1Api), ns, 'read', config.callbacks.signingSecretsName)
  const queue = new WorkQueue()
  const callbackQueue = new WorkQueue()
  // The unfinished jobs' pods and tenants, for the runner pools (fed below, with admission).
  const unfinished = new UnfinishedJobs()
  caches.utilityJobs.on((_ev, uj) => {
    queue.add(uj.metadata.name)
    if (CallbackController.wants(uj)) callbackQueue.add(uj.metadata.name)
  })
  const queueOwner = (obj: Parameters<typeof ownerOf>[0]) => {
    const name = ownerOf(obj)
    if (name) queue.add(name)
  }
  caches.jobs.on((_ev, job) => queueOwner(job))
  // A key revoked while the operator runs: its unfinished jobs look again (those still queued are
  // cancelled). At start every job is looked at anyway, so the keys listed then need no scan.
  const keyRevoked = (apiKeyId: string) => Boolean(caches.apiKeys.cache.get(objectNameOf(apiKeyId), ns)?.spec.revokedAt)
  caches.apiKeys.on((ev, key) => {
    if (ev !== 'update' || !key.spec.revokedAt) return
    for (const uj of caches.utilityJobs.cache.list(ns))
      if (uj.spec.apiKeyId === key.spec.keyId && !isTerminal(uj)) queue.add(uj.metadata.name)
  })
  const podsByOwner = new PodsByOwner()
  const podsOf = (name: string) => podsByOwner.of(name, caches.pods.cache, ns)

  const pools = new RunnerPools({
    namespace: ns,
    pods: caches.pods.cache,
    utilityJobs: caches.utilityJobs.cache,
    jobs: unfinished,
    core: d.kc.makeApiClient(CoreV1Api),
    runner: config.runner,
    client: httpPoolClient(),
    wake: (names) => names.forEach((n) => queue.add(n)),
    fence: d.fence,
    log: log.child({ controller: 'runner-pools' }),
  })
  caches.pods.on((ev, pod) => {
    podsByOwner.apply(ev, pod)
    queueOwner(pod)
    if (isPoolPod(pod)) pools.podChanged(pod)
  })

  const admission = new Admission({
    // A pooled utility runs as many jobs at once as its pool has pods.
    limitOf: (utility) => config.runner.pools?.[utility]?.size ?? config.utilityConcurrency[utility] ?? 1,
    share: config.keyShare,
    keyRevoked,
    list: () => caches.utilityJobs.cache.list(ns),
    hasJob: (uj) => Boolean(caches.jobs.cache.get(jobNameFor(uj), ns)) || pools.holds(uj),
    runnerWorking: (uj) => podsOf(uj.metadata.name).some(runnerAtWork),
    waitingForNode: () =>
      new Set(
        caches.pods.cache
          .list(ns)
          .filter(waitsForNode)
          .map((pod) => ownerOf(pod) ?? ''),
      ),
    enqueue: (name) => queue.add(name),
    log: log.child({ controller: 'admission' }),
    metrics: {
      queued: (utility, n) => d.metrics.jobsQueued.set({ utility }, n),
      running: (utility, n) => d.metrics.jobsRunning.set({ utility }, n),
      admitted: (utility, s) => d.metrics.admissionWaitSeconds.observe({ utility }, s),
    },
  })

  // A job seen to end frees its slot: admission looks at once, not at the next job's arrival.
  // (Listeners only queue work, so every one has run before any of it is done.)
  caches.utilityJobs.on((ev, uj) => {
    if (unfinished.apply(ev, uj)) admission.schedule()
  })

  // Runners' storage grants: a batch Job's its own; a pool pod's its tenant's (docs/adr/0049).
  const sts = {
    ...config.sts,
    region: config.storage.region,
    accessKey: config.storage.accessKey,
    secretKey: config.storage.secretKey,
  }
  const perJob = stsCredentialIssuer(sts, config.storage.bucket)
  const reconciler = new UtilityJobReconciler({
    events: d.events,
    fence: d.fence,
    admission,
    namespace: ns,
    utilityJobs: caches.utilityJobs.cache,
    jobs: caches.jobs.cache,
    pods: caches.pods.cache,
    batch: d.kc.makeApiClient(BatchV1Api),
    custom: d.kc.makeApiClient(CustomObjectsApi),
    storage: d.storage,
    issueCredentials: withInputKeys(perJob, sealing),
    issuePoolCredentials: withInputKeys(
      tenantCredentialIssuer({
        assume: stsAssumeRole(sts),
        bucket: config.storage.bucket,
        utilities: UTILITIES.map((u) => u.slug),
        perJob,
        counted: (scope, source) => d.metrics.runnerGrants.inc({ scope, source }),
      }),
      sealing,
    ),
    bucket: config.storage.bucket,
    runner: config.runner,
    log,
    records: d.records,
    graceMs: config.jobGraceMs,
    failedJobGraceMs: config.failedJobGraceMs,
    imagePullGraceMs: config.imagePullGraceMs,
    pools,
    podsOf,
    keyRevoked,
    onFinished: (uj, status) => {
      admission.schedule()
      observeFinished(d.metrics, uj, status)
    },
  })
  return { queue, callbackQueue, pools, reconciler, sealing }
}
