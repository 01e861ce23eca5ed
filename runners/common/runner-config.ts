import { ENV, type StorageGrant } from '../../contract/runner-protocol.js'

export interface RunnerConfig {
  jobId: string
  utility: string
  createdAtMs: number
  storage: { endpoint: string; region: string; accessKey: string; secretKey: string; bucket: string }
  /** Presigned access instead of credentials (scoped utilities); `storage` then has no keys. */
  grant?: StorageGrant
  /** Dev-only allowance: input URLs on loopback may be fetched (`make dev` serves local files). */
  allowLoopbackUrls: boolean
  terminationMessagePath: string
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const v = env[name]
  if (!v) throw new Error(`missing environment variable ${name}`)
  return v
}

/** Read once at start. */
export function loadRunnerConfig(env: NodeJS.ProcessEnv = process.env): RunnerConfig {
  const createdAtMs = Date.parse(required(env, ENV.createdAt))
  const grant = env[ENV.storageGrant] ? (JSON.parse(env[ENV.storageGrant]!) as StorageGrant) : undefined
  if (Number.isNaN(createdAtMs)) throw new Error(`${ENV.createdAt} is not a timestamp`)
  return {
    jobId: required(env, ENV.jobId),
    utility: required(env, ENV.utility),
    createdAtMs,
    storage: {
      endpoint: required(env, ENV.endpoint),
      region: env[ENV.region] || 'us-east-1',
      accessKey: grant ? '' : required(env, ENV.accessKey),
      secretKey: grant ? '' : required(env, ENV.secretKey),
      bucket: required(env, ENV.bucket),
    },
    grant,
    allowLoopbackUrls: env[ENV.allowLoopback] === 'true',
    terminationMessagePath: env.DUTIL_TERMINATION_MESSAGE_PATH || '/dev/termination-log',
  }
}
