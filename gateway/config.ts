import Type, { type Static } from 'typebox'
import type { AllowedNetworks } from '../contract/address-policy.js'
import {
  cidrSetting,
  OBSERVABILITY_SETTINGS,
  observabilityConfig,
  type ObservabilityConfig,
  readSettings,
  Setting,
  SettingsError,
  STORAGE_SETTINGS,
} from '../contract/settings.js'
import { MAX_UPLOAD_BYTES } from '../contract/limits.js'
import type { UploadSettings } from './uploads.js'

/** Every environment variable the gateway reads (README: Configuration), checked once at start. */
export const GATEWAY_SETTINGS = Type.Object({
  KUBECONFIG: Setting.optional(Setting.string('Kubeconfig file; in a cluster, the pod ServiceAccount is used')),
  DUTIL_NAMESPACE: Setting.string('Namespace of UtilityJobs, ApiKeys and console resources', {
    default: 'dutil',
    pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
  }),
  DUTIL_HOST: Setting.string('Address to listen on', { default: '127.0.0.1' }),
  DUTIL_PORT: Setting.port('Port to listen on', 8080),
  DUTIL_REDIS_URL: Setting.url('Redis (rate limits, console sessions)', {
    default: 'redis://127.0.0.1:6379',
    schemes: ['redis', 'rediss'],
  }),
  DUTIL_DATABASE_URL: Setting.url('The job record: postgres://user:password@host:port/database', {
    schemes: ['postgres', 'postgresql'],
  }),
  DUTIL_DATABASE_MAX_CONNECTIONS: Setting.integer('Connection pool size', { default: 20, minimum: 1, maximum: 1000 }),
  ...STORAGE_SETTINGS,
  ...OBSERVABILITY_SETTINGS,
  DUTIL_LINK_TTL_SECONDS: Setting.integer('Lifetime of download links', {
    default: 3600,
    minimum: 60,
    maximum: 604_800,
  }),
  DUTIL_SYNC_WAIT_SECONDS: Setting.number('How long a sync request waits before answering 202', {
    default: 90,
    minimum: 0,
    maximum: 600,
  }),
  DUTIL_RETENTION_DAYS: Setting.integer('Days finished jobs are kept', { default: 90, minimum: 1, maximum: 3650 }),
  DUTIL_TEST_HOOKS: Setting.boolean('Test-only routes (never in production)', false),
  DUTIL_GOTENBERG_ROUTES: Setting.boolean(
    "Serve Gotenberg's routes (/forms/..., /health, /version) for its clients, as jobs of the calling key",
    false,
  ),
  DUTIL_HEADERS_TIMEOUT_SECONDS: Setting.number('A client must send its request headers within this', {
    default: 10,
    minimum: 1,
    maximum: 300,
  }),
  DUTIL_REQUEST_TIMEOUT_SECONDS: Setting.number(
    'A client must send its whole request (headers and body) within this; the answer may take longer',
    { default: 30, minimum: 1, maximum: 3600 },
  ),
  // Longer than the idle timeout of the proxy in front (ingress-nginx's upstream keep-alive and
  // AWS load balancers: 60 s): a proxy that sends on a connection the gateway has just closed
  // answers its client 502. 75 s is nginx's own default.
  DUTIL_KEEP_ALIVE_TIMEOUT_SECONDS: Setting.number(
    'Idle keep-alive connections are closed after this: keep it above the idle timeout of the proxy in front',
    { default: 75, minimum: 1, maximum: 3600 },
  ),
  DUTIL_MAX_QUEUED_JOBS_PER_KEY: Setting.integer(
    'Jobs (sync or async) one API key may have waiting (queued); more answer 429',
    { default: 1000, minimum: 1, maximum: 1_000_000 },
  ),
  DUTIL_MAX_QUEUED_JOBS: Setting.integer(
    'Jobs (sync or async) the whole platform may have waiting (queued); more answer 429',
    { default: 20_000, minimum: 1, maximum: 10_000_000 },
  ),
  DUTIL_MAX_QUEUED_SHARE_PER_OWNER: Setting.number(
    "The share of DUTIL_MAX_QUEUED_JOBS one owner (a person's keys and playground runs together, or a key of its own) may have waiting; more answer 429",
    { default: 0.1, minimum: 0.001, maximum: 1 },
  ),
  DUTIL_UPLOAD_MAX_FILES_PER_KEY: Setting.integer(
    'Unexpired uploads (POST /v1/files) one API key may keep; more answer 429',
    { default: 1000, minimum: 1, maximum: 1_000_000 },
  ),
  DUTIL_UPLOAD_MAX_BYTES_PER_KEY: Setting.integer('Bytes of unexpired uploads one API key may keep; more answer 429', {
    default: 20 * 1024 ** 3,
    minimum: 1024 ** 2,
    maximum: 1024 ** 5,
  }),
  DUTIL_UPLOAD_DEFAULT_EXPIRY_SECONDS: Setting.integer('How long an upload is kept when the request names no time', {
    default: 86_400,
    minimum: 60,
    maximum: 31_536_000,
  }),
  DUTIL_UPLOAD_MAX_EXPIRY_SECONDS: Setting.integer('The longest an upload may be kept (expiresInSeconds)', {
    default: 7 * 86_400,
    minimum: 60,
    maximum: 31_536_000,
  }),
  DUTIL_FILES_PORT: Setting.optional(
    Setting.integer(
      'Port of the files host: download links presigned for it (DUTIL_S3_PUBLIC_ENDPOINT) are passed to storage with a CSP sandbox and nosniff on every answer; off when unset',
      {
        minimum: 1,
        maximum: 65_535,
      },
    ),
  ),
  DUTIL_TRUSTED_PROXIES: Setting.optional(
    Setting.string(
      'Comma-separated CIDRs of the proxies (ingress controller) whose X-Forwarded-For, -Proto and -Host are believed; from anyone else they are ignored',
    ),
  ),
  DUTIL_TRACING_TRUSTED_PARENTS: Setting.optional(
    Setting.string(
      "Comma-separated CIDRs of the peers (a proxy that starts traces) whose traceparent's sampling decision is kept; every other caller's sampled trace meets DUTIL_TRACING_SAMPLE_RATIO",
    ),
  ),
  DUTIL_KEY_LOOKUPS_PER_SECOND: Setting.number(
    'API-server look-ups for keys not (yet) in the watched cache, across all requests',
    { default: 5, exclusiveMinimum: 0, maximum: 1000 },
  ),
})
export type GatewaySettings = Static<typeof GATEWAY_SETTINGS>

export interface GatewayConfig {
  kubeconfig?: string
  namespace: string
  host: string
  port: number
  redisUrl: string
  /** The job record: postgres://user:password@host:port/database */
  databaseUrl: string
  databaseMaxConnections: number
  storage: {
    endpoint: string
    publicEndpoint: string
    region: string
    bucket: string
    accessKey: string
    secretKey: string
  }
  linkTtlSeconds: number
  syncWaitMs: number
  retentionDays: number
  testHooks: boolean
  /** Gotenberg's routes for its clients (gateway/gotenberg/, docs/gotenberg.md). */
  gotenbergRoutes: boolean
  /** The files host's port (gateway/files-host.ts), or undefined when downloads go to storage directly. */
  filesPort?: number
  /** Proxies whose forwarding headers are believed (none: the peer is the client). */
  trustedProxies: AllowedNetworks | undefined
  /** Peers whose traces keep their sampling decision (none: the ratio applies to every caller's). */
  trustedTraceParents: AllowedNetworks | undefined
  /** Slow-client bounds: headers, whole request, idle keep-alive. */
  timeouts: { headersMs: number; requestMs: number; keepAliveMs: number }
  /** Budget of API-server look-ups for unknown key hashes (new keys the watch has not delivered). */
  keyLookupsPerSecond: number
  /** Back-pressure: queued jobs one API key may have, one owner, and the whole platform. */
  maxQueuedJobsPerKey: number
  maxQueuedJobsPerOwner: number
  maxQueuedJobs: number
  /** Uploads (POST /v1/files): per-key quotas, the largest file and expiry. */
  uploads: UploadSettings
  /** Log level and tracing (docs/observability.md). */
  observability: ObservabilityConfig
}

/** Read once at start; a bad setting throws a SettingsError naming the variable. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const s = readSettings(GATEWAY_SETTINGS, env)
  return {
    kubeconfig: s.KUBECONFIG,
    namespace: s.DUTIL_NAMESPACE,
    host: s.DUTIL_HOST,
    port: s.DUTIL_PORT,
    redisUrl: s.DUTIL_REDIS_URL,
    databaseUrl: s.DUTIL_DATABASE_URL,
    databaseMaxConnections: s.DUTIL_DATABASE_MAX_CONNECTIONS,
    storage: {
      endpoint: s.DUTIL_S3_ENDPOINT,
      publicEndpoint: s.DUTIL_S3_PUBLIC_ENDPOINT ?? s.DUTIL_S3_ENDPOINT,
      region: s.DUTIL_S3_REGION,
      bucket: s.DUTIL_S3_BUCKET,
      accessKey: s.DUTIL_S3_ACCESS_KEY,
      secretKey: s.DUTIL_S3_SECRET_KEY,
    },
    linkTtlSeconds: s.DUTIL_LINK_TTL_SECONDS,
    syncWaitMs: s.DUTIL_SYNC_WAIT_SECONDS * 1000,
    retentionDays: s.DUTIL_RETENTION_DAYS,
    testHooks: s.DUTIL_TEST_HOOKS,
    gotenbergRoutes: s.DUTIL_GOTENBERG_ROUTES,
    trustedProxies: stopOnBad(() => cidrSetting('DUTIL_TRUSTED_PROXIES', s.DUTIL_TRUSTED_PROXIES)),
    trustedTraceParents: stopOnBad(() => cidrSetting('DUTIL_TRACING_TRUSTED_PARENTS', s.DUTIL_TRACING_TRUSTED_PARENTS)),
    filesPort: s.DUTIL_FILES_PORT,
    timeouts: {
      headersMs: Math.min(s.DUTIL_HEADERS_TIMEOUT_SECONDS, s.DUTIL_REQUEST_TIMEOUT_SECONDS) * 1000,
      requestMs: s.DUTIL_REQUEST_TIMEOUT_SECONDS * 1000,
      keepAliveMs: s.DUTIL_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
    },
    keyLookupsPerSecond: s.DUTIL_KEY_LOOKUPS_PER_SECOND,
    maxQueuedJobsPerKey: s.DUTIL_MAX_QUEUED_JOBS_PER_KEY,
    maxQueuedJobsPerOwner: Math.max(1, Math.floor(s.DUTIL_MAX_QUEUED_JOBS * s.DUTIL_MAX_QUEUED_SHARE_PER_OWNER + 1e-9)),
    maxQueuedJobs: s.DUTIL_MAX_QUEUED_JOBS,
    uploads: {
      maxFiles: s.DUTIL_UPLOAD_MAX_FILES_PER_KEY,
      maxBytes: s.DUTIL_UPLOAD_MAX_BYTES_PER_KEY,
      maxFileBytes: MAX_UPLOAD_BYTES,
      defaultExpirySeconds: Math.min(s.DUTIL_UPLOAD_DEFAULT_EXPIRY_SECONDS, s.DUTIL_UPLOAD_MAX_EXPIRY_SECONDS),
      maxExpirySeconds: s.DUTIL_UPLOAD_MAX_EXPIRY_SECONDS,
    },
    observability: observabilityConfig(s, 'gateway'),
  }
}

/** A structured setting's parse error stops the program at start like any other bad setting. */
function stopOnBad<T>(parse: () => T): T {
  try {
    return parse()
  } catch (err) {
    throw new SettingsError([(err as Error).message])
  }
}
