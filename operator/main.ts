import http from 'node:http'
import {
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node'
import pino from 'pino'
import { API_GROUP, API_VERSION, LABELS, MANAGED_BY, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { idOfObjectName } from '../contract/ids.js'
import { isTerminal } from '../contract/job-view.js'
import { kubeIdentity, loadKubeConfig, watchedCache } from '../platform/kube.js'
import { every, Program } from '../platform/program.js'
import { FileLinks } from '../platform/file-links.js'
import { openDatabase } from '../platform/db/database.js'
import { appendCallbackAttempt, getJob, recordCallback, recordTransition } from '../platform/db/jobs-table.js'
import { migrateDatabase } from '../platform/db/migrate.js'
import { storageClient } from '../platform/storage-client.js'
import { loadOperatorConfig } from './config.js'
import { stsCredentialIssuer } from './runner-credentials.js'
import { loadOrExit } from '../contract/settings.js'
import { LeaderElector } from './leader-election.js'
import { JobRecordUpkeep } from './job-record-upkeep.js'
import { RetentionSweeper } from './retention.js'
import { keyRevoked, SigningSecretSweeper } from './signing-secret-sweep.js'
import { catalog } from '../runners/catalog.js'
import { operatorMetrics } from './metrics.js'
import { Admission } from './admission.js'
import { jobNameFor } from './desired-job.js'
import { UtilityJobReconciler } from './reconciler.js'
import { type Worker, WorkQueue } from './work-queue.js'
import { CallbackController } from './callbacks/controller.js'
import { kubeEventRecorder } from './events.js'
import { deliverCallback } from './callbacks/delivery.js'
import { scaledSchedule } from './callbacks/schedule.js'
import { KubeSigningSecrets } from './callbacks/signing-secrets.js'

// Written synchronously, line by line: the lines before an exit (the leader-election fence exits
// at once) or a crash are all in the log, in the order they were logged. (pino's default buffered
// stream can write its last lines out of order at exit: a write in flight lands after the final
// flush.) The operator logs a few lines per job; the cost is one write each.
const log = pino({ base: { component: 'operator' } }, pino.destination({ fd: 1, sync: true }))
const config = loadOrExit(log, () => loadOperatorConfig())
// In-flight reconciles and callback attempts (10 s at most) finish within the pod's grace of 30 s.
const program = new Program({ name: 'operator', log, drainMs: 25_000 })
const kc = loadKubeConfig(config.kubeconfig)
const custom = kc.makeApiClient(CustomObjectsApi)
const batch = kc.makeApiClient(BatchV1Api)
const core = kc.makeApiClient(CoreV1Api)
const metrics = operatorMetrics()
const db = openDatabase({
  url: config.databaseUrl,
  applicationName: 'dutil-operator',
  maxConnections: config.concurrency + config.callbacks.concurrency + 4,
})
const recordCallbackState = (jobId: string, delivery: Parameters<typeof recordCallback>[2]) =>
  recordCallback(db, jobId, delivery)
const queue = new WorkQueue()
const callbackQueue = new WorkQueue()
const callbackSchedule = scaledSchedule(config.callbacks.delayScale)
const fileLinks = new FileLinks(
  storageClient({ ...config.storage, endpoint: config.callbacks.publicStorageEndpoint }),
  config.storage.bucket,
  config.callbacks.linkTtlSeconds,
  (id) => getJob(db, id),
)
const ns = config.namespace
const managed = `${LABELS.managedBy}=${MANAGED_BY}`

const enqueueOwner = (obj: V1Job | V1Pod) => {
  const name = obj.metadata?.labels?.[LABELS.jobId]
  if (name) queue.add(name)
}

const utilityJobs = watchedCache<UtilityJobResource>(
  kc,
  `/apis/${API_GROUP}/${API_VERSION}/namespaces/${ns}/${UTILITY_JOB.plural}`,
  () =>
    custom.listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: ns,
      plural: UTILITY_JOB.plural,
    }),
  log,
  (_ev, uj) => {
    queue.add(uj.metadata.name)
    if (CallbackController.wants(uj)) callbackQueue.add(uj.metadata.name)
  },
)
const jobs = watchedCache<V1Job>(
  kc,
  `/apis/batch/v1/namespaces/${ns}/jobs`,
  () => batch.listNamespacedJob({ namespace: ns, labelSelector: managed }),
  log,
  (_ev, j) => enqueueOwner(j),
  managed,
)
const pods = watchedCache<V1Pod>(
  kc,
  `/api/v1/namespaces/${ns}/pods`,
  () => core.listNamespacedPod({ namespace: ns, labelSelector: managed }),
  log,
  (_ev, p) => enqueueOwner(p),
  managed,
)

const events = kubeEventRecorder(
  kc.makeApiClient(EventsV1Api),
  ns,
  config.leaderElection.identity,
  log.child({ controller: 'events' }),
)

const callbacks = new CallbackController({
  events,
  namespace: ns,
  utilityJobs: utilityJobs.cache,
  custom,
  secrets: new KubeSigningSecrets(core, ns, config.callbacks.signingSecretsName, (apiKeyId) =>
    keyRevoked(custom, ns, apiKeyId),
  ),
  view: (uj) => fileLinks.view(uj),
  send: (msg) => deliverCallback(msg, { ...config.callbacks.destinations, timeoutMs: callbackSchedule.timeoutMs }),
  schedule: callbackSchedule,
  record: recordCallbackState,
  recordAttempt: (jobId, entry) => appendCallbackAttempt(db, jobId, entry),
  log: log.child({ controller: 'callbacks' }),
  metrics,
})

// Admission: at most DUTIL_UTILITY_CONCURRENCY jobs of each utility have a batch Job; the rest
// stay queued and are admitted in fair turns between tenants as slots free (docs/adr/0013).
const admission = new Admission({
  limitOf: (utility) => config.utilityConcurrency[utility] ?? 1,
  share: config.keyShare,
  list: () => utilityJobs.cache.list(ns),
  hasJob: (uj) => Boolean(jobs.cache.get(jobNameFor(uj), ns)),
  enqueue: (name) => queue.add(name),
  log: log.child({ controller: 'admission' }),
  metrics: {
    queued: (utility, n) => metrics.jobsQueued.set({ utility }, n),
    running: (utility, n) => metrics.jobsRunning.set({ utility }, n),
    admitted: (utility, s) => metrics.admissionWaitSeconds.observe({ utility }, s),
  },
})

const elector = config.leaderElection.enabled
  ? new LeaderElector({
      api: kc.makeApiClient(CoordinationV1Api),
      namespace: ns,
      leaseName: config.leaderElection.leaseName,
      identity: config.leaderElection.identity,
      leaseDurationMs: config.leaderElection.leaseDurationMs,
      renewDeadlineMs: (config.leaderElection.leaseDurationMs * 2) / 3,
      retryPeriodMs: config.leaderElection.leaseDurationMs / 7.5,
      log: log.child({ component: 'leader-election' }),
    })
  : undefined

/**
 * Before every write: a leader that did not renew its lease within the renew deadline (it was
 * paused, or the API server was unreachable) stops at once instead of acting on a stale queue.
 */
const fence = program.fence(() => !elector || elector.mayAct())

const storage = storageClient(config.storage)
const reconciler = new UtilityJobReconciler({
  events,
  fence,
  admission,
  namespace: ns,
  utilityJobs: utilityJobs.cache,
  jobs: jobs.cache,
  pods: pods.cache,
  batch,
  custom,
  storage,
  issueCredentials: stsCredentialIssuer(
    {
      ...config.sts,
      region: config.storage.region,
      accessKey: config.storage.accessKey,
      secretKey: config.storage.secretKey,
    },
    config.storage.bucket,
  ),
  bucket: config.storage.bucket,
  runner: config.runner,
  log,
  records: { transition: (job) => recordTransition(db, job).then(() => undefined), callback: recordCallbackState },
  graceMs: config.jobGraceMs,
  failedJobGraceMs: config.failedJobGraceMs,
  imagePullGraceMs: config.imagePullGraceMs,
  onFinished: (uj, status) => {
    admission.schedule()
    metrics.jobsFinished.inc({ utility: uj.spec.utility, status: status.state, error_code: status.error?.code ?? '' })
    const t = status.timings
    if (t.queueMs !== null) metrics.queueSeconds.observe({ utility: uj.spec.utility }, t.queueMs / 1000)
    if (t.totalMs !== null && t.queueMs !== null)
      metrics.runnerSeconds.observe({ utility: uj.spec.utility }, (t.totalMs - t.queueMs) / 1000)
  },
})

// Both sweeps work on the same jobs, files and retention; they count into the same metrics.
const sweepDeps = {
  namespace: ns,
  utilityJobs: utilityJobs.cache,
  custom,
  storage,
  bucket: config.storage.bucket,
  retentionMs: config.retention.retentionMs,
  utilities: [...catalog.keys()],
  metrics: { deletedJobs: metrics.retentionDeletedJobs, deletedObjects: metrics.retentionDeletedObjects },
}
const retention = new RetentionSweeper({ ...sweepDeps, log: log.child({ controller: 'retention' }) })
const signingSweep = new SigningSecretSweeper({
  kc,
  namespace: ns,
  secretName: config.callbacks.signingSecretsName,
  utilityJobs: utilityJobs.cache,
  log: log.child({ controller: 'signing-secrets' }),
})
const upkeep = new JobRecordUpkeep({ ...sweepDeps, db, log: log.child({ controller: 'job-record' }) })

program
  .cache('utilityjobs', utilityJobs)
  .cache('jobs', jobs)
  .cache('pods', pods)
  .check('storage', () => storage.bucketExists(config.storage.bucket).then(() => null))
  .check('database', () => db.query('SELECT 1').then(() => null))

// Every replica serves probes and metrics; a standby is ready (its caches are warm) but idle.
const server = http.createServer(
  program.probes({
    registry: metrics.registry,
    beforeScrape: () => {
      metrics.queueDepth.set(queue.depth)
      metrics.callbackQueueDepth.set(callbackQueue.depth)
    },
  }),
)
server.listen(config.metricsPort, config.host)
metrics.leader.set(0)

await program.sync()
log.info(
  {
    namespace: ns,
    allowLoopbackUrls: config.runner.allowLoopbackUrls,
    allowedPrivateNetworks: config.runner.allowedNetworks ?? null,
    port: config.metricsPort,
    identity: config.leaderElection.identity,
    kubeUser: await kubeIdentity(kc),
  },
  'operator started',
)
if (config.callbacks.delayScale !== 1)
  log.warn({ delayScale: config.callbacks.delayScale }, 'TEST SETTING: callback back-off delays are scaled')
if (config.retention.testOverride)
  log.warn(
    { retentionMs: config.retention.retentionMs },
    'TEST SETTING: retention shortened by DUTIL_RETENTION_SECONDS',
  )
if (!elector) log.warn('leader election is off: run exactly one replica')

/**
 * The leader's first duty: this build's schema (node-pg-migrate, under its advisory lock), the
 * partitions ahead and (DUTIL_S3_CREATE_BUCKET) the bucket. A store that is down is waited for,
 * every few seconds (at most 5 s apart: a trial install starts its database beside the operator).
 */
async function prepareStores(): Promise<void> {
  for (let delay = 1000; !program.signal.aborted; delay = Math.min(delay * 2, 5_000)) {
    try {
      await migrateDatabase(config.databaseUrl, log)
      await upkeep.sweep()
      if (config.createBucket && !(await storage.bucketExists(config.storage.bucket))) {
        await storage.makeBucket(config.storage.bucket, config.storage.region)
        log.info({ bucket: config.storage.bucket }, 'storage bucket made')
      }
      return
    } catch (err) {
      log.warn(
        { err: (err as Error).message, retryInMs: delay },
        'preparing the job record and storage failed, retrying',
      )
      await new Promise((r) => setTimeout(r, delay))
    }
  }
}

const warnOnFailure = (what: string) => (err: unknown) => log.warn({ err: (err as Error).message }, `${what} failed`)
const requeued = (what: string) => (key: string, err: unknown, retryInMs: number) => {
  metrics.reconcileErrors.inc()
  log.warn(
    { key, jobId: idOfObjectName(key), err: err instanceof Error ? err.message : String(err), retryInMs },
    `${what} failed, requeued`,
  )
}
/** A work queue run until leadership ends: then it takes nothing new and in-flight items finish. */
const drained = (q: WorkQueue, work: Worker, concurrency: number, what: string) => (signal: AbortSignal) => {
  signal.addEventListener('abort', () => q.stop(), { once: true })
  return q.run(work, concurrency, requeued(what)).then(() => undefined)
}

// What only the leader does: the reconcilers, the callback controller and the sweeps.
program
  .leaderOnly({
    name: 'leader gauge',
    run: (signal) => {
      metrics.leader.set(1)
      signal.addEventListener('abort', () => metrics.leader.set(0), { once: true })
    },
  })
  // Level-triggered safety net: look at every unfinished job now and then, whatever the events.
  .leaderOnly({
    name: 'resync',
    run: (signal) =>
      every(
        30_000,
        () => {
          for (const uj of utilityJobs.cache.list(ns)) if (!isTerminal(uj)) queue.add(uj.metadata.name)
          callbacks.enqueuePending(callbackQueue)
        },
        signal,
      ),
  })
  .leaderOnly({
    name: 'sweeps',
    run: (signal) =>
      every(
        config.retention.sweepMs,
        () => {
          void retention.sweep().catch(warnOnFailure('retention sweep'))
          void upkeep.sweep().catch(warnOnFailure('job record upkeep'))
          void signingSweep.sweep().catch(warnOnFailure('signing secret sweep'))
        },
        signal,
      ),
  })
  // After the caches synced (leading starts after), so a live job is never taken for lost.
  .leaderOnly({
    name: 'lost hand-offs',
    run: (signal) =>
      every(30_000, () => void upkeep.failLostHandoffs().catch(warnOnFailure('checking for lost hand-offs')), signal),
  })
  .leaderOnly({
    name: 'reconciler',
    run: drained(queue, (key) => (fence(), reconciler.reconcile(key)), config.concurrency, 'reconcile'),
  })
  // Callbacks run on their own queue: a receiver that is slow to answer never holds up reconciles.
  .leaderOnly({
    name: 'callbacks',
    run: drained(
      callbackQueue,
      (key) => (fence(), callbacks.reconcile(key)),
      config.callbacks.concurrency,
      'callback pass',
    ),
  })
  // SIGTERM: in-flight reconciles and callback attempts finish (the frame stops the leader-only
  // work first), then the lease goes back so a standby takes over at once, not after it expires.
  .onStop('lease', () => elector?.release())
  .onStop('database', () => db.end())
  .onStop('probes', () => server.close())
  .handleSignals()

if (!elector) {
  await prepareStores()
  program.lead()
} else if (await elector.acquire(program.signal)) {
  // Renewing from the first moment: preparing the database may take a while.
  void elector.holdUntilLost(program.signal).then((outcome) => {
    if (outcome !== 'lost') return
    // Another replica may already be reconciling: stop at once and start again as a candidate.
    metrics.leader.set(0)
    log.error('leader election: leadership lost, exiting')
    process.exit(1)
  })
  await prepareStores()
  program.lead()
}
