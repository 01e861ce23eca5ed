import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { loadGatewayConfig } from './config.js'

const BASE = {
  DUTIL_S3_ENDPOINT: 'http://127.0.0.1:9000',
  DUTIL_S3_ACCESS_KEY: 'a',
  DUTIL_S3_SECRET_KEY: 'b',
  DUTIL_DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/d',
}

describe('gateway settings', () => {
  it('has working defaults', () => {
    expect(loadGatewayConfig(BASE)).toMatchObject({
      port: 8080,
      syncWaitMs: 90_000,
      linkTtlSeconds: 3600,
      storage: { publicEndpoint: BASE.DUTIL_S3_ENDPOINT, bucket: 'dutil' },
      gotenbergRoutes: false,
    })
    expect(loadGatewayConfig({ ...BASE, DUTIL_GOTENBERG_ROUTES: 'true' }).gotenbergRoutes).toBe(true)
  })

  it('traces only when given a collector, and checks the tracing settings', () => {
    expect(loadGatewayConfig(BASE).observability).toEqual({ logLevel: 'info' })
    expect(
      loadGatewayConfig({
        ...BASE,
        DUTIL_TRACING_ENDPOINT: 'http://collector:4318',
        DUTIL_TRACING_SAMPLE_RATIO: '0.25',
        DUTIL_LOG_LEVEL: 'debug',
      }).observability,
    ).toEqual({
      logLevel: 'debug',
      tracing: { endpoint: 'http://collector:4318', sampleRatio: 0.25, serviceName: 'dutil-gateway' },
    })
    expect(() =>
      loadGatewayConfig({
        ...BASE,
        DUTIL_TRACING_ENDPOINT: 'collector:4318',
        DUTIL_TRACING_SAMPLE_RATIO: '2',
        DUTIL_LOG_LEVEL: 'loud',
      }),
    ).toThrow(/DUTIL_TRACING_ENDPOINT.*DUTIL_TRACING_SAMPLE_RATIO must be <= 1.*DUTIL_LOG_LEVEL/)
  })

  it('names each bad variable at once', () => {
    expect(() => loadGatewayConfig({ ...BASE, DUTIL_PORT: '80000', DUTIL_LINK_TTL_SECONDS: 'an hour' })).toThrow(
      /DUTIL_PORT must be <= 65535.*DUTIL_LINK_TTL_SECONDS must be integer/,
    )
    expect(() => loadGatewayConfig({ ...BASE, DUTIL_S3_BUCKET: 'Bad_Bucket' })).toThrow(/DUTIL_S3_BUCKET/)
    expect(() => loadGatewayConfig({ DUTIL_S3_ENDPOINT: 'http://x' })).toThrow(/DUTIL_DATABASE_URL is required/)
  })

  it('stops the gateway at start with a message naming the variable', () => {
    const main = fileURLToPath(new URL('./main.ts', import.meta.url))
    const run = spawnSync(process.execPath, ['--import', 'tsx', main], {
      env: { ...process.env, ...BASE, DUTIL_DATABASE_MAX_CONNECTIONS: 'many', KUBECONFIG: '/nonexistent' },
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain('DUTIL_DATABASE_MAX_CONNECTIONS must be integer (got "many")')
  }, 60_000)
})
