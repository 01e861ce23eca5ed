import http from 'node:http'
import { BatchV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, EventsV1Api } from '@kubernetes/client-node'
import pino from 'pino'
import { kubeIdentity, loadKubeConfig } from '../platform/kube.js'
import { Program } from '../platform/program.js'
import { FileLinks } from '../platform/file-links.js'
import { openDatabase } from '../platform/db/database.js'
import { appendCallbackAttempt, getJob, recordCallback, recordTransition } from '../platform/db/jobs-table.js'
import { storageClient } from '../platform/storage-client.js'
import { startTracing, traceLogFields } from '../platform/tracing.js'
import { loadOrExit } from '../contract/settings.js'
import { catalog } from '../runners/catalog.js'
import { objectNameOf } from '../contract/ids.js'
import { isTerminal } from '../contract/job-view.js'
import { loadOperatorConfig } from './config.js'
import { stsCredentialIssuer } from './runner-credentials.js'
import { LeaderElector } from './leader-election.js'
import { leadWhenElected } from './leadership.js'
import { addLeaderWork } from './leader-work.js'
import { prepareStores } from './prepare-stores.js'
import { JobRecordUpkeep } from './job-record-upkeep.js'
import { RetentionSweeper } from './retention.js'
import { keyRevoked as keyRevokedInApi, SigningSecretSweeper } from './signing-secret-sweep.js'
import { observeFinished, operatorMetrics } from './metrics.js'
import { Admission } from './admission.js'
import { jobNameFor } from './desired-job.js'
import { runnerAtWork, waitsForNode } from './observe-job.js'
import { UtilityJobReconciler } from './reconciler.js'
import { httpPoolClient } from './pool-client.js'
import { isPoolPod } from './pool-pod.js'
import { RunnerPools } from './runner-pools.js'
import { WorkQueue } from './work-queue.js'
import { ownerOf, PodsByOwner, watchOperatorCaches } from './watches.js'
import { CallbackController } from './callbacks/controller.js'
import { kubeEventRecorder } from './events.js'
import { deliverCallback } from './callbacks/delivery.js'
import { scaledSchedule } from './callbacks/schedule.js'
import { KubeSigningSecrets } from './callbacks/signing-secrets.js'

// Written synchronously, line by line: the lines before an exit (the leader-election fence exits
// at once) or a crash are all in the log, in the order they were logged. (pino's default buffered
// stream can write its last lines out of order at exit: a write in flight lands after the final
// flush.) The operator logs a few lines per job; the cost is one write each.
const log = pino({ base: { component: 'operator' }, mixin: traceLogFields }, pino.destination({ fd: 1, sync: true }))
const config = loadOrExit(log, () => loadOperatorConfig())
log.level = config.observability.logLevel
const stopTracing = await startTracing(config.observability.tracing)
// In-flight reconciles and callback attempts (10 s at most) finish within the pod's grace of 30 s.
const program = new Program({ name: 'operator', log, drainMs: 25_000 })
const kc = loadKubeConfig(config.kubeconfig)
const custom = kc.makeApiClient(CustomObjectsApi)
const core = kc.makeApiClient(CoreV1Api)
const ns = config.namespace
const metrics = operatorMetrics()
const db = openDatabase({
  url: config.databaseUrl,
  applicationName: 'dutil-operator',
  maxConnections: config.concurrency + config.callbacks.concurrency + 4,
})
const storage = storageClient(config.storage)
const records = {
  transition: (job: Parameters<typeof recordTransition>[1]) => recordTransition(db, job).then(() => undefined),
  callback: (jobId: string, delivery: Parameters<typeof recordCallback>[2]) => recordCallback(db, jobId, delivery),
}

// Every change of a UtilityJob, or of a batch Job or runner pod the operator owns, queues its UtilityJob.
const queue = new WorkQueue()
const callbackQueue = new WorkQueue()
const caches = watchOperatorCaches(kc, ns, log)
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
caches.pods.on((ev, pod) => {
  podsByOwner.apply(ev, pod)
  queueOwner(pod)
  if (isPoolPod(pod)) pools.podChanged(pod)
})

const events = kubeEventRecorder(
  kc.makeApiClient(EventsV1Api),
  ns,
  config.leaderElection.identity,
  log.child({ controller: 'events' }),
)
const callbackSchedule = scaledSchedule(config.callbacks.delayScale)
const fileLinks = new FileLinks(
  storageClient({ ...config.storage, endpoint: config.callbacks.publicStorageEndpoint }),
  config.storage.bucket,
  config.callbacks.linkTtlSeconds,
  (id) => getJob(db, id),
)
const callbacks = new CallbackController({
  events,
  namespace: ns,
  utilityJobs: caches.utilityJobs.cache,
  custom,
  secrets: new KubeSigningSecrets(core, ns, config.callbacks.signingSecretsName, (apiKeyId) =>
    keyRevokedInApi(custom, ns, apiKeyId),
  ),
  view: (uj) => fileLinks.view(uj),
  send: (msg) => deliverCallback(msg, { ...config.callbacks.destinations, timeoutMs: callbackSchedule.timeoutMs }),
  schedule: callbackSchedule,
  record: records.callback,
  recordAttempt: (jobId, entry) => appendCallbackAttempt(db, jobId, entry),
  log: log.child({ controller: 'callbacks' }),
  metrics,
})

// Pool mode: long-lived runner pods for the utilities that have a pool (docs/adr/0026).
const pools = new RunnerPools({
  namespace: ns,
  pods: caches.pods.cache,
  utilityJobs: caches.utilityJobs.cache,
  core,
  runner: config.runner,
  client: httpPoolClient(),
  wake: (names) => names.forEach((n) => queue.add(n)),
  fence: () => fence(),
  log: log.child({ controller: 'runner-pools' }),
})

// Admission: at most DUTIL_UTILITY_CONCURRENCY jobs of each utility have a batch Job; the rest
// stay queued and are admitted in fair turns between tenants as slots free (docs/adr/0013).
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
    queued: (utility, n) => metrics.jobsQueued.set({ utility }, n),
    running: (utility, n) => metrics.jobsRunning.set({ utility }, n),
    admitted: (utility, s) => metrics.admissionWaitSeconds.observe({ utility }, s),
  },
})

const election = config.leaderElection
const elector = election.enabled
  ? new LeaderElector({
      api: kc.makeApiClient(CoordinationV1Api),
      namespace: ns,
      leaseName: election.leaseName,
      identity: election.identity,
      leaseDurationMs: election.leaseDurationMs,
      renewDeadlineMs: (election.leaseDurationMs * 2) / 3,
      retryPeriodMs: election.leaseDurationMs / 7.5,
      log: log.child({ component: 'leader-election' }),
    })
  : undefined
// Before every write: a leader that did not renew its lease within the renew deadline (it was
// paused, or the API server was unreachable) stops at once instead of acting on a stale queue.
const fence = program.fence(() => !elector || elector.mayAct())

const reconciler = new UtilityJobReconciler({
  events,
  fence,
  admission,
  namespace: ns,
  utilityJobs: caches.utilityJobs.cache,
  jobs: caches.jobs.cache,
  pods: caches.pods.cache,
  batch: kc.makeApiClient(BatchV1Api),
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
  records,
  graceMs: config.jobGraceMs,
  failedJobGraceMs: config.failedJobGraceMs,
  imagePullGraceMs: config.imagePullGraceMs,
  pools,
  podsOf,
  keyRevoked,
  onFinished: (uj, status) => {
    admission.schedule()
    observeFinished(metrics, uj, status)
  },
})

// The sweeps work on the same jobs, files and retention; they count into the same metrics.
const sweepDeps = {
  namespace: ns,
  utilityJobs: caches.utilityJobs.cache,
  custom,
  storage,
  bucket: config.storage.bucket,
  retentionMs: config.retention.retentionMs,
  utilities: [...catalog.keys()],
  metrics: { deletedJobs: metrics.retentionDeletedJobs, deletedObjects: metrics.retentionDeletedObjects },
}
const retention = new RetentionSweeper({ ...sweepDeps, log: log.child({ controller: 'retention' }) })
const upkeep = new JobRecordUpkeep({ ...sweepDeps, db, log: log.child({ controller: 'job-record' }) })
const signingSweep = new SigningSecretSweeper({
  kc,
  namespace: ns,
  secretName: config.callbacks.signingSecretsName,
  utilityJobs: caches.utilityJobs.cache,
  retentionMs: config.retention.retentionMs,
  log: log.child({ controller: 'signing-secrets' }),
})

program
  .cache('utilityjobs', caches.utilityJobs)
  .cache('jobs', caches.jobs)
  .cache('pods', caches.pods)
  .cache('apikeys', caches.apiKeys)
  .check('storage', () => storage.bucketExists(config.storage.bucket).then(() => null))
  .check('database', () => db.query('SELECT 1').then(() => null))
addLeaderWork(program, {
  namespace: ns,
  utilityJobs: caches.utilityJobs.cache,
  queue,
  callbackQueue,
  reconciler,
  callbacks,
  sweeps: [
    { name: 'retention sweep', sweep: () => retention.sweep() },
    { name: 'job record upkeep', sweep: () => upkeep.sweep() },
    { name: 'signing secret sweep', sweep: () => signingSweep.sweep() },
  ],
  sweepMs: config.retention.sweepMs,
  pools,
  failLostHandoffs: () => upkeep.failLostHandoffs(),
  fence,
  concurrency: config.concurrency,
  callbackConcurrency: config.callbacks.concurrency,
  metrics,
  log,
})

// Every replica serves probes and metrics; a standby is ready (its caches are warm) but idle.
const server = http.createServer(
  program.probes({
    exposition: metrics.exposition,
    beforeScrape: () => {
      metrics.queueDepth.set(queue.depth)
      metrics.callbackQueueDepth.set(callbackQueue.depth)
    },
  }),
)
server.listen(config.metricsPort, config.host)
metrics.leader.set(0)

// SIGTERM: in-flight reconciles and callback attempts finish (the frame stops the leader-only
// work first), then the lease goes back so a standby takes over at once, not after it expires.
program
  .onStop('lease', () => elector?.release())
  .onStop('database', () => db.end())
  .onStop('probes', () => server.close())
  .onStop('tracing', stopTracing)
  .handleSignals()

await program.sync()
log.info(
  {
    namespace: ns,
    allowLoopbackUrls: config.runner.allowLoopbackUrls,
    allowedPrivateNetworks: config.runner.allowedNetworks ?? null,
    port: config.metricsPort,
    identity: election.identity,
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

const stores = {
  databaseUrl: config.databaseUrl,
  storage,
  bucket: config.storage.bucket,
  region: config.storage.region,
  createBucket: config.createBucket,
  sweepJobRecord: () => upkeep.sweep(),
  log,
}
await leadWhenElected(
  program,
  elector,
  () => prepareStores(stores, program.signal),
  () => {
    metrics.leader.set(0)
    log.error('leader election: leadership lost, exiting')
    process.exit(1)
  },
)
