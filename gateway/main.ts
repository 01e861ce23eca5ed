import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node'
import { InputSealingKey } from '../platform/input-sealing-key.js'
import { Redis } from 'ioredis'
import pino from 'pino'
import { kubeIdentity, loadKubeConfig } from '../platform/kube.js'
import { Program } from '../platform/program.js'
import { ApiKeyAdmin } from '../platform/api-key-admin.js'
import { loadOrExit } from '../contract/settings.js'
import { guarded, openDatabase } from '../platform/db/database.js'
import { getJob } from '../platform/db/jobs-table.js'
import { pendingMigrations } from '../platform/db/migrate.js'
import { storageClient } from '../platform/storage-client.js'
import { startTracing } from '../platform/tracing.js'
import { createApp } from './app.js'
import { loadGatewayConfig } from './config.js'
import { createConsole } from './console/index.js'
import { loadConsoleConfig } from './console/config.js'
import { FileLinks } from './file-links.js'
import { JobReader } from './job-reader.js'
import { JobRecords } from './job-records.js'
import { Uploads } from './uploads.js'
import { DirectUploads, DIRECT_UPLOAD_WINDOW_SECONDS } from './direct-uploads.js'
import { UploadDigests } from './upload-digests.js'
import { JobWaiters } from './job-waiters.js'
import { KeyRegistry, kubeKeyLookup, TokenBucket } from './key-registry.js'
import { listen } from './servers.js'
import { UtilityJobClient } from '../platform/utility-job-client.js'
import { watchApiKeys, watchJobChanges } from './watches.js'
import { KeyUsage } from './key-usage.js'
import { gatewayMetrics } from './metrics.js'
import { RateLimiter } from './rate-limit.js'
import { RequestTraces } from './trace-requests.js'

// Lines logged with a request id carry that request's trace (gateway/trace-requests.ts).
const requestTraces = new RequestTraces()
const log = pino({ base: { component: 'gateway' }, mixin: requestTraces.logFields })
const config = loadOrExit(log, () => loadGatewayConfig())
log.level = config.observability.logLevel
// No async context: each request's trace travels in its Koa state (docs/adr/0025).
// Callers' sampled traces meet the ratio too, but those of DUTIL_TRACING_TRUSTED_PARENTS.
const stopTracing = await startTracing(config.observability.tracing, { asyncContext: false, trustRemoteParents: false })
const consoleConfig = loadOrExit(log, () => loadConsoleConfig(process.env, `http://${config.host}:${config.port}`))
// In-flight requests get 10 s after SIGTERM: sync waits end with 202 + Location, long-polls with the job as it is.
const program = new Program({ name: 'gateway', log, drainMs: 10_000 })
const kc = loadKubeConfig(config.kubeconfig)
const custom = kc.makeApiClient(CustomObjectsApi)
const ns = config.namespace
const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false })
redis.on('error', (err) => log.warn({ err: err.message }, 'redis connection problem'))
const storage = storageClient(config.storage)
const db = openDatabase({
  url: config.databaseUrl,
  maxConnections: config.databaseMaxConnections,
  applicationName: 'dutil-gateway',
})
const presigner = storageClient({ ...config.storage, endpoint: config.storage.publicEndpoint })

const jobs = new UtilityJobClient(custom, ns)
const reader = new JobReader(db, jobs)
const waiters = new JobWaiters(reader)
const records = new JobRecords(db, reader, {
  maxQueuedPerKey: config.maxQueuedJobsPerKey,
  maxQueuedPerOwner: config.maxQueuedJobsPerOwner,
  maxQueuedTotal: config.maxQueuedJobs,
})
const jobChanges = watchJobChanges(kc, custom, ns, log, waiters)
const keyCache = watchApiKeys(kc, custom, ns, log)
// One budget of API-server look-ups for whatever the watched caches miss before authentication
// (unknown API keys, console invite tokens and e-mails), shared by every request.
const lookupBudget = new TokenBucket(config.keyLookupsPerSecond, Math.max(1, Math.ceil(config.keyLookupsPerSecond)))
const keys = new KeyRegistry(keyCache.cache, kubeKeyLookup(custom, ns), ns, { budget: lookupBudget })
keyCache.on((ev, key) => keys.observe(ev, key))

// Direct uploads' parts hashed as they pass through the files host (one process serves both).
const uploadDigests = new UploadDigests(4096, DIRECT_UPLOAD_WINDOW_SECONDS * 1000)
const metrics = gatewayMetrics(
  () => keys.counts,
  () => uploadDigests.counts,
)
const links = new FileLinks(presigner, config.storage.bucket, config.linkTtlSeconds, (id) =>
  guarded(() => getJob(db, id)),
)
const uploads = new Uploads(db, storage, config.storage.bucket, config.uploads)
// Made on the first job that carries a password (the Secret entry is kept from then on).
const sealing = InputSealingKey.of(kc.makeApiClient(CoreV1Api), ns, 'make')
const consoleApp = createConsole({
  kc,
  namespace: ns,
  redis,
  jobs,
  reader,
  records,
  metrics,
  keyCache: keyCache.cache,
  links,
  storage,
  bucket: config.storage.bucket,
  uploads,
  sealing,
  config: consoleConfig,
  log,
  lookupBudget,
})
const app = createApp({
  jobs,
  reader,
  waiters,
  keys,
  keyUsage: new KeyUsage(redis, custom, ns, log),
  links,
  console: consoleApp.middleware,
  records,
  limiter: new RateLimiter(redis, log),
  storage,
  bucket: config.storage.bucket,
  uploads,
  sealing,
  directUploads: new DirectUploads(db, storage, presigner, config.storage.bucket, config.uploads, uploadDigests),
  log,
  metrics,
  syncWaitMs: config.syncWaitMs,
  testHooks: config.testHooks,
  gotenbergRoutes: config.gotenbergRoutes,
  trustedProxies: config.trustedProxies,
  requestTraces,
  trustedTraceParents: config.trustedTraceParents,
  shutdown: program.signal,
  isReady: () => program.ready(),
})
// Ready: caches synced, Redis, storage and the job record reachable (and migrated), not
// draining (docs/adr/0003 for Redis, 0010 for the job record).
program
  .cache('jobs', jobChanges)
  .cache('keys', keyCache)
  .cache('console', consoleApp)
  .check('redis', () => (redis.status === 'ready' ? null : 'redis unreachable'))
  // The bucket itself, not only storage answering: a trial's operator makes it after migrating.
  .check('storage', async () =>
    (await storage.bucketExists(config.storage.bucket)) ? null : `storage bucket ${config.storage.bucket} missing`,
  )
  // The operator's leader migrates; this build's schema must be there before requests come.
  .check('database', async () => {
    const pending = await pendingMigrations(db)
    return pending.length ? `database schema not migrated yet (${pending.join(', ')})` : null
  })

await program.sync()
// The workspace signing secret (playground runs, keys without their own) exists from the first start.
await new ApiKeyAdmin(kc, ns)
  .ensureWorkspaceSecret()
  .catch((err) => log.warn({ err: (err as Error).message }, 'the workspace signing secret could not be made'))
const servers = listen(config, app, log, uploadDigests)
log.info(
  {
    url: `http://${config.host}:${config.port}`,
    namespace: ns,
    testHooks: config.testHooks,
    kubeUser: await kubeIdentity(kc),
  },
  'gateway listening',
)
if (consoleConfig.off) log.warn({ reason: consoleConfig.off }, 'console off')
else
  log.info(
    {
      console: `${consoleConfig.publicUrl}/console/`,
      oidc: consoleConfig.oidc?.issuer ?? null,
      insecureCookies: consoleConfig.insecureCookies,
    },
    'console ready',
  )

/**
 * SIGTERM: readiness fails and in-flight sync waits and long-polls answer at once (the frame
 * aborts its signal first); the servers stop accepting connections and finish what is open,
 * then Redis and the job record close and the caches stop.
 */
program
  .onStop('servers', () => servers.close())
  .onStop('redis', () => redis.disconnect())
  .onStop('database', () => db.end())
  .onStop('tracing', stopTracing)
  .handleSignals()
