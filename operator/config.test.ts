import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { SettingsError } from '../contract/settings.js'
import { loadOperatorConfig, parseRunnerPools, parseUtilityConcurrency } from './config.js'

const BASE = {
  DUTIL_S3_ENDPOINT: 'http://127.0.0.1:9000',
  DUTIL_S3_ACCESS_KEY: 'a',
  DUTIL_S3_SECRET_KEY: 'b',
  DUTIL_DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/d',
}

describe('operator settings', () => {
  it('has working defaults', () => {
    const c = loadOperatorConfig(BASE)
    expect(c).toMatchObject({
      concurrency: 8,
      metricsPort: 8081,
      jobGraceMs: 3_600_000,
      leaderElection: { enabled: true, leaseDurationMs: 15_000 },
    })
    expect(c.runner.storage.endpoint).toBe(BASE.DUTIL_S3_ENDPOINT)
  })

  it('refuses a concurrency of "eight" instead of running with zero workers', () => {
    expect(() => loadOperatorConfig({ ...BASE, DUTIL_OPERATOR_CONCURRENCY: 'eight' })).toThrow(SettingsError)
    expect(() => loadOperatorConfig({ ...BASE, DUTIL_OPERATOR_CONCURRENCY: 'eight' })).toThrow(
      /DUTIL_OPERATOR_CONCURRENCY must be integer/,
    )
    expect(() => loadOperatorConfig({ ...BASE, DUTIL_OPERATOR_CONCURRENCY: '0' })).toThrow(
      /DUTIL_OPERATOR_CONCURRENCY must be >= 1/,
    )
    expect(() =>
      loadOperatorConfig({ ...BASE, DUTIL_RUNNER_RESOURCES: '{"split-pdf":{"limits":{"cpu":"lots"}}}' }),
    ).toThrow(/split-pdf/)
    expect(() => loadOperatorConfig({ ...BASE, DUTIL_DATABASE_URL: 'mysql://x' })).toThrow(/DUTIL_DATABASE_URL/)
  })

  it('names the variable of every malformed JSON or CIDR setting, all at once, without echoing a password', () => {
    let message = ''
    try {
      loadOperatorConfig({
        ...BASE,
        DUTIL_RUNNER_RESOURCES: '{oops',
        DUTIL_UTILITY_CONCURRENCY: 'four',
        DUTIL_ALLOWED_PRIVATE_NETWORKS: '10.0.0.0/33',
      })
    } catch (err) {
      message = (err as Error).message
    }
    expect(message).toContain('DUTIL_RUNNER_RESOURCES must be JSON')
    expect(message).toContain('DUTIL_UTILITY_CONCURRENCY must be JSON')
    expect(message).toContain('DUTIL_ALLOWED_PRIVATE_NETWORKS: "10.0.0.0/33" is not a CIDR')
    expect(() => loadOperatorConfig({ ...BASE, DUTIL_DATABASE_URL: 'postgress://dutil:s3cret-pw@db/dutil' })).toThrow(
      /postgress:\/\/dutil:\*\*\*@db\/dutil/,
    )
    expect(() =>
      loadOperatorConfig({ ...BASE, DUTIL_DATABASE_URL: 'postgress://dutil:s3cret-pw@db/dutil' }),
    ).not.toThrow(/s3cret/)
  })

  it('stops the operator at start with a message naming the variable', () => {
    const main = fileURLToPath(new URL('./main.ts', import.meta.url))
    const run = spawnSync(process.execPath, ['--import', 'tsx', main], {
      env: { ...process.env, ...BASE, DUTIL_OPERATOR_CONCURRENCY: 'eight', KUBECONFIG: '/nonexistent' },
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain('DUTIL_OPERATOR_CONCURRENCY must be integer (got "eight")')
  }, 60_000)
})

describe('utility concurrency', () => {
  it('takes each utility default from the catalog and overrides from DUTIL_UTILITY_CONCURRENCY', () => {
    expect(parseUtilityConcurrency(undefined)).toMatchObject({
      'html-pdf': 5,
      'split-pdf': 6,
      'zip-files': 8,
      'unzip-files': 8,
      'xls-to-xlsx': 8,
    })
    expect(parseUtilityConcurrency('{"split-pdf":2}')).toMatchObject({ 'html-pdf': 5, 'split-pdf': 2 })
    expect(
      loadOperatorConfig({ ...BASE, DUTIL_UTILITY_CONCURRENCY: '{"html-pdf":1}' }).utilityConcurrency['html-pdf'],
    ).toBe(1)
  })

  it('refuses unknown utilities and counts that are not positive whole numbers, at start', () => {
    expect(() => parseUtilityConcurrency('{"pdf-split":2}')).toThrow('pdf-split is not a utility')
    expect(() => parseUtilityConcurrency('{"split-pdf":0}')).toThrow('split-pdf must be a whole number')
    expect(() => parseUtilityConcurrency('{"split-pdf":"4"}')).toThrow('split-pdf must be a whole number')
    expect(() => parseUtilityConcurrency('[4]')).toThrow('JSON object')
    expect(() => loadOperatorConfig({ ...BASE, DUTIL_UTILITY_CONCURRENCY: 'four' })).toThrow(SettingsError)
  })

  it('reads runner pools: only a utility with a pool program, sizes and restart counts in range', () => {
    expect(parseRunnerPools(undefined)).toEqual({})
    expect(parseRunnerPools('{"html-pdf":{}}')).toEqual({
      'html-pdf': { size: 2, spare: 1, restartEvery: 100, idleSeconds: 300 },
    })
    expect(parseRunnerPools('{"split-pdf":{"size":4,"spare":0,"restartEvery":10,"idleSeconds":30}}')).toEqual({
      'split-pdf': { size: 4, spare: 0, restartEvery: 10, idleSeconds: 30 },
    })
    expect(() => parseRunnerPools('{"html-pdf":{"browsers":2}}')).toThrow('html-pdf.browsers is not a pool setting')
    expect(() => parseRunnerPools('{"html-pdf":{"size":2,"spare":3}}')).toThrow(
      'html-pdf.spare may not exceed its size',
    )
    expect(() => parseRunnerPools('{"nope":{}}')).toThrow('nope is not a utility')
    expect(() => parseRunnerPools('{"html-pdf":{"size":0}}')).toThrow('html-pdf.size')
    expect(() => parseRunnerPools('{"html-pdf":{"restartEvery":1.5}}')).toThrow('html-pdf.restartEvery')
  })
})
