import http from 'node:http'
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type V1Job, type V1Pod } from '@kubernetes/client-node'
import pino from 'pino'
import { API_GROUP, API_VERSION, LABELS, MANAGED_BY, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { isTerminal } from '../contract/job-view.js'
import { loadKubeConfig, watchedCache } from '../contract/kube.js'
import { FileLinks } from '../contract/file-links.js'
import { storageClient } from '../contract/storage-client.js'
import { loadOperatorConfig } from './config.js'
import { operatorMetrics } from './metrics.js'
import { UtilityJobReconciler } from './reconciler.js'
import { WorkQueue } from './work-queue.js'
import { CallbackController } from './callbacks/controller.js'
import { deliverCallback } from './callbacks/delivery.js'
import { scaledSchedule } from './callbacks/schedule.js'
import { KubeSigningSecrets } from './callbacks/signing-secrets.js'

const log = pino({ base: { component: 'operator' } })
const config = loadOperatorConfig()
const kc = loadKubeConfig(config.kubeconfig)
const custom = kc.makeApiClient(CustomObjectsApi)
const batch = kc.makeApiClient(BatchV1Api)
const core = kc.makeApiClient(CoreV1Api)
const metrics = operatorMetrics()
const queue = new WorkQueue()
const callbackQueue = new WorkQueue()
const callbackSchedule = scaledSchedule(config.callbacks.delayScale)
const fileLinks = new FileLinks(storageClient({ ...config.storage, endpoint: config.callbacks.publicStorageEndpoint }), config.storage.bucket, config.callbacks.linkTtlSeconds)
const ns = config.namespace
const managed = `${LABELS.managedBy}=${MANAGED_BY}`

const enqueueOwner = (obj: V1Job | V1Pod) => {
  const name = obj.metadata?.labels?.[LABELS.jobId]
  if (name) queue.add(name)
}

const utilityJobs = watchedCache<UtilityJobResource>(
  kc,
  `/apis/${API_GROUP}/${API_VERSION}/namespaces/${ns}/${UTILITY_JOB.plural}`,
  () => custom.listNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, namespace: ns, plural: UTILITY_JOB.plural }),
  log,
  (_ev, uj) => {
    queue.add(uj.metadata.name)
    if (CallbackController.wants(uj)) callbackQueue.add(uj.metadata.name)
  },
)
const jobs = watchedCache<V1Job>(kc, `/apis/batch/v1/namespaces/${ns}/jobs`, () => batch.listNamespacedJob({ namespace: ns, labelSelector: managed }), log, (_ev, j) => enqueueOwner(j), managed)
const pods = watchedCache<V1Pod>(kc, `/api/v1/namespaces/${ns}/pods`, () => core.listNamespacedPod({ namespace: ns, labelSelector: managed }), log, (_ev, p) => enqueueOwner(p), managed)

const callbacks = new CallbackController({
  namespace: ns,
  utilityJobs: utilityJobs.cache,
  custom,
  secrets: new KubeSigningSecrets(core, ns, config.callbacks.workspaceSecretName),
  view: (uj) => fileLinks.view(uj),
  send: (msg) => deliverCallback(msg, { allowLoopback: config.runner.allowLoopbackUrls, timeoutMs: callbackSchedule.timeoutMs }),
  schedule: callbackSchedule,
  log: log.child({ controller: 'callbacks' }),
  metrics,
})

const reconciler = new UtilityJobReconciler({
  namespace: ns,
  utilityJobs: utilityJobs.cache,
  jobs: jobs.cache,
  pods: pods.cache,
  batch,
  custom,
  storage: storageClient(config.storage),
  presigner: storageClient({ ...config.storage, endpoint: config.runner.storage.endpoint }),
  bucket: config.storage.bucket,
  runner: config.runner,
  log,
  onFinished: (uj, status) => {
    metrics.jobsFinished.inc({ utility: uj.spec.utility, status: status.state, error_code: status.error?.code ?? '' })
    const t = status.timings
    if (t.queueMs !== null) metrics.queueSeconds.observe({ utility: uj.spec.utility }, t.queueMs / 1000)
    if (t.totalMs !== null && t.queueMs !== null) metrics.runnerSeconds.observe({ utility: uj.spec.utility }, (t.totalMs - t.queueMs) / 1000)
  },
})

let ready = false
const server = http.createServer(async (req, res) => {
  if (req.url === '/healthz') return void res.end('ok')
  if (req.url === '/readyz') {
    res.statusCode = ready ? 200 : 503
    return void res.end(ready ? 'ok' : 'caches not synced')
  }
  if (req.url === '/metrics') {
    metrics.queueDepth.set(queue.depth)
    metrics.callbackQueueDepth.set(callbackQueue.depth)
    res.setHeader('content-type', metrics.registry.contentType)
    return void res.end(await metrics.registry.metrics())
  }
  res.statusCode = 404
  res.end()
})
server.listen(config.metricsPort, '127.0.0.1')

await Promise.all([utilityJobs.synced, jobs.synced, pods.synced])
ready = true
log.info({ namespace: ns, allowLoopbackUrls: config.runner.allowLoopbackUrls, port: config.metricsPort }, 'operator started')
if (config.callbacks.delayScale !== 1) log.warn({ delayScale: config.callbacks.delayScale }, 'TEST SETTING: callback back-off delays are scaled')

// Level-triggered safety net: look at every unfinished job now and then, whatever the events.
const resync = setInterval(() => {
  for (const uj of utilityJobs.cache.list(ns)) if (!isTerminal(uj)) queue.add(uj.metadata.name)
  callbacks.enqueuePending(callbackQueue)
}, 30_000)
callbacks.enqueuePending(callbackQueue)

const running = queue.run((key) => reconciler.reconcile(key), config.concurrency, (key, err, retryInMs) => {
  metrics.reconcileErrors.inc()
  log.warn({ key, err: err instanceof Error ? err.message : String(err), retryInMs }, 'reconcile failed, requeued')
})

// Callbacks run on their own queue: a receiver that is slow to answer never holds up reconciles.
const delivering = callbackQueue.run((key) => callbacks.reconcile(key), config.callbacks.concurrency, (key, err, retryInMs) => {
  metrics.reconcileErrors.inc()
  log.warn({ key, err: err instanceof Error ? err.message : String(err), retryInMs }, 'callback pass failed, requeued')
})

const shutdown = async (signal: string) => {
  log.info({ signal }, 'operator stopping')
  clearInterval(resync)
  queue.stop()
  callbackQueue.stop()
  await Promise.allSettled([utilityJobs.stop(), jobs.stop(), pods.stop()])
  server.close()
  await Promise.all([running, delivering])
  process.exit(0)
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
