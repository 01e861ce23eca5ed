import { tmpdir } from 'node:os'
import { AllowedNetworks, type AddressAllowance } from '../../contract/address-policy.js'
import { ENV } from '../../contract/runner-protocol.js'

export interface RunnerConfig {
  jobId: string
  utility: string
  createdAtMs: number
  /** The job's own temporary credentials (RunnerCredentials): its objects and nothing else. */
  storage: {
    endpoint: string
    region: string
    accessKey: string
    secretKey: string
    sessionToken?: string
    bucket: string
  }
  /**
   * What outbound fetches may reach besides public addresses: loopback under the dev allowance
   * (`make dev` serves local files), and the private networks an administrator named.
   */
  outbound: AddressAllowance
  terminationMessagePath: string
  /** Where the job's scratch files go: the temporary directory in job mode, a directory of its own in pool mode. */
  scratchDir: string
  /**
   * Pool mode: a result manifest that fits POOL.maxAnsweredResultBytes is not stored but answered
   * with the job's state (the operator checks it as it checks a stored one).
   */
  answerResult?: boolean
  /** The key of the job's sealed input secrets, when its input holds some (docs/adr/0042). */
  sealKey?: Buffer
  /** The job's whole input, sealed, when it rode with the job (docs/adr/0043); else it is read from storage. */
  sealedInput?: string
  /** Set when the job is traced: its context and where spans go (docs/observability.md). */
  tracing?: { traceparent: string; endpoint: string; serviceName: string }
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
    outbound: {
      allowLoopback: env[ENV.allowLoopback] === 'true',
      allowedNetworks: AllowedNetworks.parse(env[ENV.allowedNetworks]),
      clusterNetworks: AllowedNetworks.parse(env[ENV.clusterNetworks]),
    },
    ...(env[ENV.sealKey] ? { sealKey: Buffer.from(env[ENV.sealKey]!, 'base64url') } : {}),
    ...(env[ENV.sealedInput] ? { sealedInput: env[ENV.sealedInput] } : {}),
    terminationMessagePath: env.DUTIL_TERMINATION_MESSAGE_PATH || '/dev/termination-log',
    scratchDir: tmpdir(),
    ...(env[ENV.traceparent] && env[ENV.tracingEndpoint]
      ? {
          tracing: {
            traceparent: env[ENV.traceparent]!,
            endpoint: env[ENV.tracingEndpoint]!,
            serviceName: env[ENV.tracingServiceName] || `dutil-runner-${env[ENV.utility] ?? ''}`,
          },
        }
      : {}),
  }
}
