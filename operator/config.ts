import { hostname } from 'node:os'
import type { Logger } from 'pino'
import { SECRET_OBJECTS } from '../platform/secret-entries.js'
import type { RunnerResources } from '../contract/utility.js'
import Type from 'typebox'
import type { AddressAllowance } from '../contract/address-policy.js'
import { catalog } from '../runners/catalog.js'
import {
  cidrSetting,
  jsonObjectSetting,
  OBSERVABILITY_SETTINGS,
  observabilityConfig,
  type ObservabilityConfig,
  readSettings,
  Setting,
  STORAGE_SETTINGS,
  SettingsError,
} from '../contract/settings.js'
import type { RunnerSettings } from './desired-job.js'
import { parseRunnerPods } from './runner-pod.js'

export interface OperatorConfig {
  /** Log level and tracing (docs/observability.md); runners trace to the same collector. */
  observability: ObservabilityConfig
  kubeconfig?: string
  namespace: string
  /** Address of /metrics, /healthz and /readyz. */
  host: string
  metricsPort: number
  concurrency: number
  /** The job record: postgres://user:password@host:port/database */
  databaseUrl: string
  /** How long a finished, archived UtilityJob stays in the cluster (kubectl get utilityjobs). */
  jobGraceMs: number
  imagePullGraceMs: number
  failedJobGraceMs: number
  leaderElection: LeaderElectionSettings
  retention: RetentionSettings
  storage: { endpoint: string; region: string; bucket: string; accessKey: string; secretKey: string }
  /** Admission: jobs of each utility running at once (every catalog utility has an entry). */
  utilityConcurrency: Record<string, number>
  /** Admission: the share of each utility's slots one tenant (API key, playground person) may hold. */
  keyShare: number
  /** Make the bucket at start when it is missing (the chart's internal storage). */
  createBucket: boolean
  /** Issues runner credentials: the operator's own storage credentials against this STS endpoint. */
  sts: { endpoint: string; roleArn?: string }
  runner: RunnerSettings
  callbacks: CallbackSettings
}

export interface CallbackSettings {
  /** Attempts in flight at once (each waits at most 10 s for its receiver). */
  concurrency: number
  /** Tests only: multiplies the back-off delays (1 = docs/api.md's 10 s, 20 s, …). */
  delayScale: number
  /** Secret with the `whsec_` signing secrets: the workspace's and each key's own. */
  signingSecretsName: string
  /** Download links in a callback's job view: presigned against this address, valid this long. */
  publicStorageEndpoint: string
  linkTtlSeconds: number
  /** Which non-public receivers are allowed: loopback (dev) and named private networks. */
  destinations: AddressAllowance
}

export interface LeaderElectionSettings {
  enabled: boolean
  leaseName: string
  /** This replica's identity: its pod name (a restarted container keeps it and takes its lease straight back). */
  identity: string
  leaseDurationMs: number
}

export interface RetentionSettings {
  /** Finished jobs and their files are deleted this long after they finished. */
  retentionMs: number
  /** Interval between sweeps. */
  sweepMs: number
  /** True when a test shortened the retention below a day (logged at start). */
  testOverride: boolean
}

/** Every environment variable the operator reads (README: Configuration), checked once at start. */
export const OPERATOR_SETTINGS = Type.Object({
  KUBECONFIG: Setting.optional(Setting.string('Kubeconfig file; in a cluster, the pod ServiceAccount is used')),
  HOSTNAME: Setting.optional(Setting.string('Pod name fallback for the leader identity')),
  DUTIL_NAMESPACE: Setting.string('Namespace of UtilityJobs and runner Jobs', {
    default: 'dutil',
    pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
  }),
  DUTIL_OPERATOR_HOST: Setting.string('Address of /metrics, /healthz and /readyz', { default: '127.0.0.1' }),
  DUTIL_OPERATOR_PORT: Setting.port('Port of /metrics, /healthz and /readyz', 8081),
  DUTIL_OPERATOR_CONCURRENCY: Setting.integer('UtilityJobs reconciled at once', {
    default: 8,
    minimum: 1,
    maximum: 256,
  }),
  DUTIL_DATABASE_URL: Setting.url('The job record: postgres://user:password@host:port/database', {
    schemes: ['postgres', 'postgresql'],
  }),
  DUTIL_JOB_GRACE_SECONDS: Setting.number('How long a finished, archived UtilityJob stays in the cluster', {
    default: 3600,
    minimum: 0,
  }),
  DUTIL_FAILED_JOB_GRACE_SECONDS: Setting.number(
    "How long a failed job's batch Job (and its pod, for kubectl logs) stays after the failure is recorded; below the 15 minutes after which kube-prometheus' KubeJobFailed fires",
    { default: 300, minimum: 0, maximum: 840 },
  ),
  DUTIL_IMAGE_PULL_GRACE_SECONDS: Setting.number(
    'How long a runner may wait for an image that cannot be pulled before its job fails (internal)',
    { default: 60, minimum: 1, maximum: 3600 },
  ),
  DUTIL_S3_CREATE_BUCKET: Setting.boolean(
    "Make the bucket at start when it is missing (the chart's internal storage)",
    false,
  ),
  DUTIL_LEADER_ELECTION: Setting.boolean('Elect a leader on a Lease (off only for a single replica)', true),
  DUTIL_LEASE_NAME: Setting.string('Lease name', {
    default: 'dutil-operator',
    pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
  }),
  DUTIL_POD_NAME: Setting.optional(Setting.string("This replica's identity (its pod name)")),
  DUTIL_LEASE_DURATION_SECONDS: Setting.number('Lease duration', { default: 15, exclusiveMinimum: 0 }),
  DUTIL_RETENTION_DAYS: Setting.number('Days finished jobs and their files are kept', {
    default: 90,
    exclusiveMinimum: 0,
  }),
  DUTIL_RETENTION_SECONDS: Setting.optional(
    Setting.number('Tests only: retention in seconds, replacing DUTIL_RETENTION_DAYS', { exclusiveMinimum: 0 }),
  ),
  DUTIL_RETENTION_SWEEP_SECONDS: Setting.number('Interval between retention sweeps', {
    default: 3600,
    exclusiveMinimum: 0,
  }),
  ...STORAGE_SETTINGS,
  ...OBSERVABILITY_SETTINGS,
  DUTIL_RUNNER_S3_ENDPOINT: Setting.optional(
    Setting.url('Storage endpoint as runner pods reach it (default: DUTIL_S3_ENDPOINT)'),
  ),
  DUTIL_STS_ENDPOINT: Setting.optional(
    Setting.url('STS endpoint that issues runner credentials (default: DUTIL_S3_ENDPOINT, as MinIO serves it)'),
  ),
  DUTIL_STS_ROLE_ARN: Setting.optional(Setting.string('Role runner sessions assume (AWS; MinIO ignores it)')),
  DUTIL_IMAGE_REGISTRY: Setting.string('Registry of the runner images', { default: 'ghcr.io/dutil' }),
  DUTIL_IMAGE_TAG: Setting.string('Tag of the runner images', {
    default: 'latest',
    pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$',
  }),
  DUTIL_ALLOW_LOOPBACK_URLS: Setting.boolean('Dev only: runners may fetch loopback URLs', false),
  DUTIL_ALLOWED_PRIVATE_NETWORKS: Setting.optional(
    Setting.string(
      'Private networks (comma-separated CIDRs) that input URLs and callbacks may reach, e.g. an in-cluster receiver; none by default',
    ),
  ),
  DUTIL_CLUSTER_NETWORKS: Setting.optional(
    Setting.string(
      "The cluster's pod and Service ranges (comma-separated CIDRs): runners and callbacks refuse them like private ranges, also where they are global IPv6 or public IPv4 addresses",
    ),
  ),
  DUTIL_JOB_TTL_SECONDS: Setting.integer('ttlSecondsAfterFinished of runner Jobs', { default: 86_400, minimum: 0 }),
  DUTIL_RUNNER_RESOURCES: Setting.optional(Setting.string('Per-utility requests and limits as JSON')),
  DUTIL_RUNNER_POD: Setting.optional(
    Setting.string(
      'Runner pod placement as JSON {"default": {...}, "<utility>": {...}}: imagePullSecrets, nodeSelector, tolerations, affinity, priorityClassName, runtimeClassName, annotations, labels',
    ),
  ),
  DUTIL_UTILITY_CONCURRENCY: Setting.optional(
    Setting.string('Per-utility jobs running at once, as JSON {"html-pdf": 4}; others keep the catalog default'),
  ),
  DUTIL_RUNNER_POOLS: Setting.optional(
    Setting.string(
      'Utilities run in pool mode, as JSON {"split-pdf": {"size": 2, "spare": 1, "restartEvery": 100, "idleSeconds": 300}}: runner pods that take one job at a time, each serving one tenant',
    ),
  ),
  DUTIL_KEY_SHARE: Setting.number(
    "Share of each utility's run slots one owner is given while another waits; alone, an owner takes all but one slot, kept for a newcomer (1: no share, no reserve)",
    {
      default: 0.5,
      exclusiveMinimum: 0,
      maximum: 1,
    },
  ),
  DUTIL_CALLBACK_CONCURRENCY: Setting.integer('Callback attempts in flight at once', {
    default: 16,
    minimum: 1,
    maximum: 1024,
  }),
  DUTIL_CALLBACK_DELAY_SCALE: Setting.number('Tests only: multiplies the callback back-off delays', {
    default: 1,
    exclusiveMinimum: 0,
    maximum: 1,
  }),
  DUTIL_SIGNING_SECRETS: Setting.string('Secret with the callback signing secrets (workspace and per key)', {
    default: SECRET_OBJECTS.signing,
  }),
  DUTIL_LINK_TTL_SECONDS: Setting.integer('Lifetime of download links in callbacks', {
    default: 3600,
    minimum: 60,
    maximum: 604_800,
  }),
})

/** Read once at start; a bad setting throws a SettingsError naming the variable. */
export function loadOperatorConfig(env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  const s = readSettings(OPERATOR_SETTINGS, env)
  const storage = {
    endpoint: s.DUTIL_S3_ENDPOINT,
    region: s.DUTIL_S3_REGION,
    bucket: s.DUTIL_S3_BUCKET,
    accessKey: s.DUTIL_S3_ACCESS_KEY,
    secretKey: s.DUTIL_S3_SECRET_KEY,
  }
  // Each structured setting parsed on its own, every problem named by its variable.
  const problems: string[] = []
  const parsed = <T>(name: string, parse: () => T, fallback: T): T => {
    try {
      return parse()
    } catch (err) {
      const message = (err as Error).message
      problems.push(message.startsWith(name) ? message : `${name}: ${message}`)
      return fallback
    }
  }
  const resources = parsed('DUTIL_RUNNER_RESOURCES', () => parseRunnerResources(s.DUTIL_RUNNER_RESOURCES), {})
  const concurrency = parsed(
    'DUTIL_UTILITY_CONCURRENCY',
    () => parseUtilityConcurrency(s.DUTIL_UTILITY_CONCURRENCY),
    {},
  )
  const pods = parsed('DUTIL_RUNNER_POD', () => parseRunnerPods(s.DUTIL_RUNNER_POD), {})
  const pools = parsed('DUTIL_RUNNER_POOLS', () => parseRunnerPools(s.DUTIL_RUNNER_POOLS), {})
  const allowedNetworks = parsed(
    'DUTIL_ALLOWED_PRIVATE_NETWORKS',
    () => cidrSetting('DUTIL_ALLOWED_PRIVATE_NETWORKS', s.DUTIL_ALLOWED_PRIVATE_NETWORKS),
    undefined,
  )
  const clusterNetworks = parsed(
    'DUTIL_CLUSTER_NETWORKS',
    () => cidrSetting('DUTIL_CLUSTER_NETWORKS', s.DUTIL_CLUSTER_NETWORKS),
    undefined,
  )
  if (problems.length) throw new SettingsError(problems)
  const observability = observabilityConfig(s, 'operator')
  return {
    observability,
    kubeconfig: s.KUBECONFIG,
    namespace: s.DUTIL_NAMESPACE,
    host: s.DUTIL_OPERATOR_HOST,
    metricsPort: s.DUTIL_OPERATOR_PORT,
    concurrency: s.DUTIL_OPERATOR_CONCURRENCY,
    databaseUrl: s.DUTIL_DATABASE_URL,
    jobGraceMs: s.DUTIL_JOB_GRACE_SECONDS * 1000,
    imagePullGraceMs: s.DUTIL_IMAGE_PULL_GRACE_SECONDS * 1000,
    failedJobGraceMs: s.DUTIL_FAILED_JOB_GRACE_SECONDS * 1000,
    leaderElection: {
      enabled: s.DUTIL_LEADER_ELECTION,
      leaseName: s.DUTIL_LEASE_NAME,
      identity: s.DUTIL_POD_NAME ?? s.HOSTNAME ?? hostname(),
      leaseDurationMs: s.DUTIL_LEASE_DURATION_SECONDS * 1000,
    },
    retention: {
      retentionMs:
        s.DUTIL_RETENTION_SECONDS !== undefined
          ? s.DUTIL_RETENTION_SECONDS * 1000
          : s.DUTIL_RETENTION_DAYS * 86_400_000,
      sweepMs: s.DUTIL_RETENTION_SWEEP_SECONDS * 1000,
      testOverride: s.DUTIL_RETENTION_SECONDS !== undefined,
    },
    storage,
    createBucket: s.DUTIL_S3_CREATE_BUCKET,
    utilityConcurrency: concurrency,
    keyShare: s.DUTIL_KEY_SHARE,
    sts: { endpoint: s.DUTIL_STS_ENDPOINT ?? storage.endpoint, roleArn: s.DUTIL_STS_ROLE_ARN },
    runner: {
      imageRegistry: s.DUTIL_IMAGE_REGISTRY,
      imageTag: s.DUTIL_IMAGE_TAG,
      storage: {
        endpoint: s.DUTIL_RUNNER_S3_ENDPOINT ?? storage.endpoint,
        region: storage.region,
        bucket: storage.bucket,
      },
      allowLoopbackUrls: s.DUTIL_ALLOW_LOOPBACK_URLS,
      allowedNetworks: allowedNetworks?.cidrs.join(','),
      clusterNetworks: clusterNetworks?.cidrs.join(','),
      jobTtlSeconds: s.DUTIL_JOB_TTL_SECONDS,
      resources,
      pods,
      pools,
      ...(observability.tracing
        ? { tracing: { endpoint: observability.tracing.endpoint, servicePrefix: s.DUTIL_TRACING_SERVICE_PREFIX } }
        : {}),
    },
    callbacks: {
      concurrency: s.DUTIL_CALLBACK_CONCURRENCY,
      delayScale: s.DUTIL_CALLBACK_DELAY_SCALE,
      signingSecretsName: s.DUTIL_SIGNING_SECRETS,
      publicStorageEndpoint: s.DUTIL_S3_PUBLIC_ENDPOINT ?? storage.endpoint,
      linkTtlSeconds: s.DUTIL_LINK_TTL_SECONDS,
      destinations: { allowLoopback: s.DUTIL_ALLOW_LOOPBACK_URLS, allowedNetworks, clusterNetworks },
    },
  }
}

const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$/

/**
 * `DUTIL_RUNNER_RESOURCES`: per-utility requests and limits replacing the catalog's, as JSON
 * `{ "<slug>": { "requests": { "cpu": "250m", "memory": "512Mi" }, "limits": { … } } }` (the Helm
 * chart renders it from `runners.<slug>.resources`). Checked at start: a typo fails loudly.
 */
export function parseRunnerResources(raw: string | undefined): Record<string, RunnerResources> {
  if (!raw) return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new Error('DUTIL_RUNNER_RESOURCES must be JSON')
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('DUTIL_RUNNER_RESOURCES must be a JSON object keyed by utility')
  const out: Record<string, RunnerResources> = {}
  for (const [slug, r] of Object.entries(parsed as Record<string, unknown>)) {
    const res = r as Partial<RunnerResources>
    for (const part of ['requests', 'limits'] as const) {
      for (const q of ['cpu', 'memory'] as const) {
        const v = res?.[part]?.[q]
        if (typeof v !== 'string' || !QUANTITY.test(v))
          throw new Error(`DUTIL_RUNNER_RESOURCES: ${slug}.${part}.${q} must be a Kubernetes quantity`)
      }
    }
    out[slug] = {
      requests: { cpu: res.requests!.cpu, memory: res.requests!.memory },
      limits: { cpu: res.limits!.cpu, memory: res.limits!.memory },
    }
  }
  return out
}

/**
 * `DUTIL_UTILITY_CONCURRENCY`: jobs of each utility running at once, as JSON `{ "<slug>": n }`
 * over the catalog's defaults (the chart renders it from `runners.<slug>.concurrency`). Checked
 * at start: an unknown utility or a count that is not a positive whole number fails loudly.
 */
export function parseUtilityConcurrency(raw: string | undefined): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(
    [...catalog.values()].map((u) => [u.slug, u.runner.concurrency]),
  )
  if (!raw) return out
  for (const [slug, n] of Object.entries(jsonObjectSetting('DUTIL_UTILITY_CONCURRENCY', raw, 'utility'))) {
    if (!catalog.has(slug)) throw new Error(`DUTIL_UTILITY_CONCURRENCY: ${slug} is not a utility`)
    if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 10_000)
      throw new Error(`DUTIL_UTILITY_CONCURRENCY: ${slug} must be a whole number from 1 to 10000`)
    out[slug] = n as number
  }
  return out
}

/** Pool mode for one utility (docs/adr/0026-runner-pools.md). */
export interface RunnerPool {
  /** The most pool pods of the utility at once: its run slots. */
  size: number
  /** Generic pods (bound to no tenant yet) kept started ahead, within the size. */
  spare: number
  /** A pod retires after this many jobs. */
  restartEvery: number
  /** A pod bound to a tenant retires after this many seconds without a job. */
  idleSeconds: number
}

const POOL_BOUNDS: Record<keyof RunnerPool, [number, number, number]> = {
  // default, least, most
  size: [2, 1, 100],
  spare: [1, 0, 100],
  restartEvery: [100, 1, 100_000],
  idleSeconds: [300, 1, 86_400],
}

/**
 * `DUTIL_RUNNER_POOLS`: the utilities run in pool mode, as JSON `{ "<slug>": { "size": n,
 * "spare": n, "restartEvery": n, "idleSeconds": n } }` (the chart renders it from
 * `runners.<slug>.mode: pool` and `pool`). Checked at start.
 */
export function parseRunnerPools(raw: string | undefined): Record<string, RunnerPool> {
  if (!raw) return {}
  const out: Record<string, RunnerPool> = {}
  for (const [slug, v] of Object.entries(jsonObjectSetting('DUTIL_RUNNER_POOLS', raw, 'utility'))) {
    if (!catalog.get(slug)) throw new Error(`DUTIL_RUNNER_POOLS: ${slug} is not a utility`)
    const given = (v ?? {}) as Record<string, unknown>
    for (const k of Object.keys(given))
      if (!(k in POOL_BOUNDS)) throw new Error(`DUTIL_RUNNER_POOLS: ${slug}.${k} is not a pool setting`)
    const pool = {} as RunnerPool
    for (const [k, [fallback, least, most]] of Object.entries(POOL_BOUNDS) as Array<[keyof RunnerPool, number[]]>) {
      const n = given[k] ?? fallback
      if (!Number.isInteger(n) || (n as number) < least || (n as number) > most)
        throw new Error(`DUTIL_RUNNER_POOLS: ${slug}.${k} must be a whole number from ${least} to ${most}`)
      pool[k] = n as number
    }
    if (pool.spare > pool.size) throw new Error(`DUTIL_RUNNER_POOLS: ${slug}.spare may not exceed its size`)
    out[slug] = pool
  }
  return out
}

/** The start-up line, and a warning for each setting that is only for tests or a single replica. */
export function logStarted(log: Logger, config: OperatorConfig, kubeUser: string | null, elected: boolean): void {
  log.info(
    {
      namespace: config.namespace,
      allowLoopbackUrls: config.runner.allowLoopbackUrls,
      allowedPrivateNetworks: config.runner.allowedNetworks ?? null,
      port: config.metricsPort,
      identity: config.leaderElection.identity,
      kubeUser,
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
  if (!elected) log.warn('leader election is off: run exactly one replica')
}
