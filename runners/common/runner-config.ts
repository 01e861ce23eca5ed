import { ENV } from '../../contract/runner-protocol.js'

export interface RunnerConfig {
  jobId: string
  utility: string
  createdAtMs: number
  /** The job's own temporary credentials (RunnerCredentials): its objects and nothing else. */
  storage: { endpoint: string; region: string; accessKey: string; secretKey: string; sessionToken?: string; bucket: string }
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
  if (Number.isNaN(createdAtMs)) throw new Error(`${ENV.createdAt} is not a timestamp`)
  return {
    jobId: required(env, ENV.jobId),
    utility: required(env, ENV.utility),
    createdAtMs,
    storage: {
      endpoint: required(env, ENV.endpoint),
      region: env[ENV.region] || 'us-east-1',
      accessKey: required(env, ENV.accessKey),
      secretKey: required(env, ENV.secretKey),
      sessionToken: env[ENV.sessionToken] || undefined,
      bucket: required(env, ENV.bucket),
    },
    allowLoopbackUrls: env[ENV.allowLoopback] === 'true',
    terminationMessagePath: env.DUTIL_TERMINATION_MESSAGE_PATH || '/dev/termination-log',
  }
}
