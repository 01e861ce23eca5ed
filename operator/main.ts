import http from 'node:http'
import { EventsV1Api } from '@kubernetes/client-node'
import pino from 'pino'
import { kubeIdentity, loadKubeConfig } from '../platform/kube.js'
import { Program } from '../platform/program.js'
import { openDatabase } from '../platform/db/database.js'
import { recordCallback, recordTransition } from '../platform/db/jobs-table.js'
import { storageClient } from '../platform/storage-client.js'
import { startTracing, traceLogFields } from '../platform/tracing.js'
import { loadOrExit } from '../contract/settings.js'
import { loadOperatorConfig, logStarted } from './config.js'
import { leaderElector, leadWhenElected } from './leadership.js'
import { addLeaderWork } from './leader-work.js'
import { prepareStores } from './prepare-stores.js'
import { operatorMetrics } from './metrics.js'
import { watchOperatorCaches } from './watches.js'
import { kubeEventRecorder } from './events.js'
import { jobControllers } from './job-controllers.js'
import { callbackController } from './callback-wiring.js'
import { operatorSweeps } from './sweeps.js'

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

const caches = watchOperatorCaches(kc, ns, log)
const events = kubeEventRecorder(
  kc.makeApiClient(EventsV1Api),
  ns,
  config.leaderElection.identity,
  log.child({ controller: 'events' }),
)

const election = config.leaderElection
const elector = leaderElector(kc, ns, election, log)
// Before every write: a leader that did not renew its lease within the renew deadline (it was
// paused, or the API server was unreachable) stops at once instead of acting on a stale queue.
const fence = program.fence(() => !elector || elector.mayAct())

const wiring = { kc, config, caches, storage, db, records, events, metrics, fence, log }
const { queue, callbackQueue, pools, reconciler, sealing } = jobControllers(wiring)
const callbacks = callbackController(wiring)
const { upkeep, sweeps } = operatorSweeps(wiring)

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
  sweeps,
  sweepMs: config.retention.sweepMs,
  pools,
  failLostHandoffs: () => upkeep.failLostHandoffs(),
  recountQueued: () => upkeep.recountQueued(),
  announceSealedInputs: () => sealing.announceSealedInputs(),
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
logStarted(log, config, await kubeIdentity(kc), Boolean(elector))

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
