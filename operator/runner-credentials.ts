import { AssumeRoleProvider } from 'minio/dist/esm/AssumeRoleProvider.mjs'
import type { JobError, UtilityJobResource } from '../contract/crd-schemas.js'
import type { RunnerCredentials } from '../contract/runner-protocol.js'
import { GrantRefused, storageGrant } from '../contract/storage-grant.js'
import type { UtilityDefinition } from '../contract/utility.js'
import { jobSealKey } from '../platform/sealed-input.js'
import { deadlineSeconds } from './desired-job.js'

/** Past the deadline, so a slow start or a retried pod does not strand a runner without access. */
const GRACE_SECONDS = 600
/** STS bounds on a session's length (AWS and MinIO: 15 minutes to 12 hours). */
const MIN_SESSION_SECONDS = 900
const MAX_SESSION_SECONDS = 43_200

/** How long the job's credentials live: its deadline plus grace, within STS bounds. */
export function sessionSeconds(uj: UtilityJobResource, utility: UtilityDefinition): number {
  return Math.min(MAX_SESSION_SECONDS, Math.max(MIN_SESSION_SECONDS, deadlineSeconds(uj, utility) + GRACE_SECONDS))
}

export interface StsSettings {
  /** The STS endpoint: MinIO serves it on its S3 address; AWS at https://sts.<region>.amazonaws.com. */
  endpoint: string
  region: string
  accessKey: string
  secretKey: string
  /** AWS needs a role to assume (whose permissions the session policy narrows); MinIO ignores it. */
  roleArn?: string
}

export type IssueCredentials = (uj: UtilityJobResource, utility: UtilityDefinition) => Promise<RunnerCredentials>

/**
 * Issues each runner its own temporary credentials with STS AssumeRole and the job's session
 * policy: the effective permissions are the intersection of the operator's and the policy's, so
 * they cover the job's objects only, and they expire soon after its deadline.
 */
export function stsCredentialIssuer(sts: StsSettings, bucket: string): IssueCredentials {
  return async (uj, utility) => {
    // The grant the gateway checked at accept, for the job as it is in the cluster (one made
    // with kubectl is checked here first): GrantRefused fails the job.
    const policy = JSON.stringify(storageGrant(uj.spec, bucket))
    const provider = new AssumeRoleProvider({
      stsEndpoint: sts.endpoint,
      accessKey: sts.accessKey,
      secretKey: sts.secretKey,
      region: sts.region,
      durationSeconds: sessionSeconds(uj, utility),
      policy,
      ...(sts.roleArn ? { roleArn: sts.roleArn, roleSessionName: uj.metadata.name.slice(0, 64) } : {}),
    })
    let c: Awaited<ReturnType<AssumeRoleProvider['getCredentials']>>
    try {
      c = await provider.getCredentials()
    } catch (err) {
      const code = stsRefusalCode(err)
      if (code) throw new GrantRefused(`Storage refused the job's access grant (${code}).`)
      throw err
    }
    return {
      accessKey: c.accessKey,
      secretKey: c.secretKey,
      sessionToken: c.sessionToken ?? '',
      expiresAt: new Date(Date.now() + sessionSeconds(uj, utility) * 1000).toISOString(),
    }
  }
}

/** STS answers that say "not now" rather than "no": the grant is asked for again. */
const TRANSIENT_STS_CODES = new Set([
  'InternalError',
  'ServiceUnavailable',
  'SlowDown',
  'Throttling',
  'RequestTimeout',
  'RequestLimitExceeded',
])

/**
 * The error code of an STS answer that refused the grant (a malformed or oversized policy, access
 * denied), or null for anything worth another try: no answer at all, or a transient one. The
 * MinIO client wraps the parsed answer as the cause of its error's cause.
 */
export function stsRefusalCode(err: unknown): string | null {
  let e: unknown = err
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const answer = (e as { ErrorResponse?: { Error?: { Code?: unknown } } }).ErrorResponse
    if (answer) {
      const code = typeof answer.Error?.Code === 'string' ? answer.Error.Code : 'Unknown'
      return TRANSIENT_STS_CODES.has(code) ? null : code
    }
    e = (e as { cause?: unknown }).cause
  }
  return null
}

/**
 * The job's credentials, or the failure that a refused grant is: storage will never issue it, so
 * the job fails now (`storage_error`) instead of holding its run slot (and a pool pod) while
 * every pass asks again. Anything else (storage unreachable) throws: the pass is retried.
 */
export async function credentialsOrRefusal(
  issue: IssueCredentials,
  uj: UtilityJobResource,
  utility: UtilityDefinition,
): Promise<RunnerCredentials | { refused: JobError }> {
  try {
    return await issue(uj, utility)
  } catch (err) {
    if (!(err instanceof GrantRefused)) throw err
    return {
      refused: { code: 'storage_error', message: `This job's storage access cannot be granted: ${err.message}` },
    }
  }
}

/**
 * `issue`, and for a job whose input is sealed (a small input riding with the job, docs/adr/0043,
 * or passwords in a stored one, docs/adr/0042) the key that opens it, made from the
 * installation's sealing key for this job alone. A key that cannot be read (its Secret entry
 * missing) is a refusal: the job could never open its input.
 */
export function withInputKeys(issue: IssueCredentials, sealing: { key(): Promise<Buffer> }): IssueCredentials {
  return async (uj, utility) => {
    if (!uj.spec.inputSealed && !uj.spec.sealedInput) return issue(uj, utility)
    let installationKey: Buffer
    try {
      installationKey = await sealing.key()
    } catch (err) {
      throw new GrantRefused(`the key of its sealed input cannot be read (${(err as Error).message})`)
    }
    const credentials = await issue(uj, utility)
    return { ...credentials, sealKey: jobSealKey(installationKey, uj.spec.jobId).toString('base64url') }
  }
}
