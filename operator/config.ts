import { WORKSPACE_SIGNING_SECRET } from '../contract/api-keys.js'
import type { RunnerSettings } from './desired-job.js'

export interface OperatorConfig {
  kubeconfig?: string
  namespace: string
  metricsPort: number
  concurrency: number
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

function env(name: string, fallback?: string): string {
  const v = process.env[name] ?? fallback
  if (v === undefined || v === '') throw new Error(`missing setting ${name}`)
  return v
}

/** Read once at start; every setting is an environment variable (see README: Configuration). */
export function loadOperatorConfig(): OperatorConfig {
  const storage = {
    endpoint: env('DUTIL_S3_ENDPOINT'),
    region: env('DUTIL_S3_REGION', 'us-east-1'),
    bucket: env('DUTIL_S3_BUCKET', 'dutil'),
    accessKey: env('DUTIL_S3_ACCESS_KEY'),
    secretKey: env('DUTIL_S3_SECRET_KEY'),
  }
  return {
    kubeconfig: process.env.KUBECONFIG || undefined,
    namespace: env('DUTIL_NAMESPACE', 'dutil'),
    metricsPort: Number(env('DUTIL_OPERATOR_PORT', '8081')),
    concurrency: Number(env('DUTIL_OPERATOR_CONCURRENCY', '8')),
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
