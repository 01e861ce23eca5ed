import type { RunnerSettings } from '../../operator/desired-job.js'

/** The operator's runner settings for unit tests: a registry, a tag, the storage service; override what a test looks at. */
export function runnerSettings(overrides: Partial<RunnerSettings> = {}): RunnerSettings {
  return {
    imageRegistry: 'ghcr.io/dutil',
    imageTag: 'v1',
    storage: { endpoint: 'http://minio:9000', region: 'us-east-1', bucket: 'dutil' },
    allowLoopbackUrls: false,
    jobTtlSeconds: 3600,
    ...overrides,
  }
}
