import { setting } from '../contract/settings.js'

export interface GatewayConfig {
  kubeconfig?: string
  namespace: string
  host: string
  port: number
  redisUrl: string
  /** The job record: postgres://user:password@host:port/database */
  databaseUrl: string
  databaseMaxConnections: number
  storage: { endpoint: string; publicEndpoint: string; region: string; bucket: string; accessKey: string; secretKey: string }
  linkTtlSeconds: number
  syncWaitMs: number
  retentionDays: number
  testHooks: boolean
}

const env = setting

/** Read once at start; every setting is an environment variable (see README: Configuration). */
export function loadGatewayConfig(): GatewayConfig {
  const endpoint = env('DUTIL_S3_ENDPOINT')
  return {
    kubeconfig: process.env.KUBECONFIG || undefined,
    namespace: env('DUTIL_NAMESPACE', 'dutil'),
    host: env('DUTIL_HOST', '127.0.0.1'),
    port: Number(env('DUTIL_PORT', '8080')),
    redisUrl: env('DUTIL_REDIS_URL', 'redis://127.0.0.1:6379'),
    databaseUrl: env('DUTIL_DATABASE_URL'),
    databaseMaxConnections: Number(env('DUTIL_DATABASE_MAX_CONNECTIONS', '20')),
    storage: {
      endpoint,
      publicEndpoint: env('DUTIL_S3_PUBLIC_ENDPOINT', endpoint),
      region: env('DUTIL_S3_REGION', 'us-east-1'),
      bucket: env('DUTIL_S3_BUCKET', 'dutil'),
      accessKey: env('DUTIL_S3_ACCESS_KEY'),
      secretKey: env('DUTIL_S3_SECRET_KEY'),
    },
    linkTtlSeconds: Number(env('DUTIL_LINK_TTL_SECONDS', '3600')),
    syncWaitMs: Number(env('DUTIL_SYNC_WAIT_SECONDS', '90')) * 1000,
    retentionDays: Number(env('DUTIL_RETENTION_DAYS', '90')),
    testHooks: env('DUTIL_TEST_HOOKS', 'false') === 'true',
  }
}
