import { hostname } from 'node:os'
import { WORKSPACE_SIGNING_SECRET } from '../contract/api-keys.js'
import type { RunnerResources } from '../contract/utility.js'
import { setting } from '../contract/settings.js'
import type { RunnerSettings } from './desired-job.js'

export interface OperatorConfig {
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
  leaderElection: LeaderElectionSettings
  retention: RetentionSettings
  storage: { endpoint: string; region: string; bucket: string; accessKey: string; secretKey: string }
  runner: RunnerSettings
  callbacks: CallbackSettings
}

export interface CallbackSettings {
  /** Attempts in flight at once (each waits at most 10 s for its receiver). */
  concurrency: number
  /** Tests only: multiplies the back-off delays (1 = the spec's 10 s, 20 s, …). */
  delayScale: number
  /** Secret with the workspace's `whsec_` secret, for keys without their own. */
  workspaceSecretName: string
  /** Download links in a callback's job view: presigned against this address, valid this long. */
  publicStorageEndpoint: string
  linkTtlSeconds: number
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

const env = setting

/** Read once at start; every setting is an environment variable (see README: Configuration). */
export function loadOperatorConfig(): OperatorConfig {
  const storage = {
    endpoint: env('DUTIL_S3_ENDPOINT'),
    region: env('DUTIL_S3_REGION', 'us-east-1'),
    bucket: env('DUTIL_S3_BUCKET', 'dutil'),
    accessKey: env('DUTIL_S3_ACCESS_KEY'),
    secretKey: env('DUTIL_S3_SECRET_KEY'),
  }
  const retentionSeconds = process.env.DUTIL_RETENTION_SECONDS
  const leaseSeconds = positive('DUTIL_LEASE_DURATION_SECONDS', '15')
  return {
    kubeconfig: process.env.KUBECONFIG || undefined,
    namespace: env('DUTIL_NAMESPACE', 'dutil'),
    host: env('DUTIL_OPERATOR_HOST', '127.0.0.1'),
    metricsPort: Number(env('DUTIL_OPERATOR_PORT', '8081')),
    concurrency: Number(env('DUTIL_OPERATOR_CONCURRENCY', '8')),
    databaseUrl: env('DUTIL_DATABASE_URL'),
    jobGraceMs: nonNegative('DUTIL_JOB_GRACE_SECONDS', '3600') * 1000,
    leaderElection: {
      enabled: env('DUTIL_LEADER_ELECTION', 'true') === 'true',
      leaseName: env('DUTIL_LEASE_NAME', 'dutil-operator'),
      identity: env('DUTIL_POD_NAME', process.env.HOSTNAME || hostname()),
      leaseDurationMs: leaseSeconds * 1000,
    },
    retention: {
      retentionMs: retentionSeconds ? positive('DUTIL_RETENTION_SECONDS') * 1000 : positive('DUTIL_RETENTION_DAYS', '90') * 86_400_000,
      sweepMs: positive('DUTIL_RETENTION_SWEEP_SECONDS', '3600') * 1000,
      testOverride: Boolean(retentionSeconds),
    },
    storage,
    runner: {
      imageRegistry: env('DUTIL_IMAGE_REGISTRY', 'ghcr.io/dutil'),
      imageTag: env('DUTIL_IMAGE_TAG', 'latest'),
      storage: {
        endpoint: env('DUTIL_RUNNER_S3_ENDPOINT', storage.endpoint),
        region: storage.region,
        bucket: storage.bucket,
        secretName: env('DUTIL_STORAGE_SECRET', 'dutil-storage'),
      },
      allowLoopbackUrls: env('DUTIL_ALLOW_LOOPBACK_URLS', 'false') === 'true',
      jobTtlSeconds: Number(env('DUTIL_JOB_TTL_SECONDS', '86400')),
      resources: parseRunnerResources(process.env.DUTIL_RUNNER_RESOURCES),
    },
    callbacks: {
      concurrency: Number(env('DUTIL_CALLBACK_CONCURRENCY', '16')),
      delayScale: Number(env('DUTIL_CALLBACK_DELAY_SCALE', '1')),
      workspaceSecretName: env('DUTIL_WORKSPACE_SIGNING_SECRET', WORKSPACE_SIGNING_SECRET),
      publicStorageEndpoint: env('DUTIL_S3_PUBLIC_ENDPOINT', storage.endpoint),
      linkTtlSeconds: Number(env('DUTIL_LINK_TTL_SECONDS', '3600')),
    },
  }
}

function positive(name: string, fallback?: string): number {
  const n = Number(env(name, fallback))
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number`)
  return n
}

function nonNegative(name: string, fallback?: string): number {
  const n = Number(env(name, fallback))
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number of at least 0`)
  return n
}

const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$/

/**
 * `DUTIL_RUNNER_RESOURCES`: per-utility requests and limits replacing the catalog's, as JSON
 * `{ "<slug>": { "requests": { "cpu": "250m", "memory": "512Mi" }, "limits": { … } } }` (the Helm
 * chart renders it from `runners.<slug>.resources`). Checked at start: a typo fails loudly.
 */
export function parseRunnerResources(raw: string | undefined): Record<string, RunnerResources> {
  if (!raw) return {}
  const parsed = JSON.parse(raw) as unknown
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('DUTIL_RUNNER_RESOURCES must be a JSON object keyed by utility')
  const out: Record<string, RunnerResources> = {}
  for (const [slug, r] of Object.entries(parsed as Record<string, unknown>)) {
    const res = r as Partial<RunnerResources>
    for (const part of ['requests', 'limits'] as const) {
      for (const q of ['cpu', 'memory'] as const) {
        const v = res?.[part]?.[q]
        if (typeof v !== 'string' || !QUANTITY.test(v)) throw new Error(`DUTIL_RUNNER_RESOURCES: ${slug}.${part}.${q} must be a Kubernetes quantity`)
      }
    }
    out[slug] = { requests: { cpu: res.requests!.cpu, memory: res.requests!.memory }, limits: { cpu: res.limits!.cpu, memory: res.limits!.memory } }
  }
  return out
}
