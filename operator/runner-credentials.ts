import { AssumeRoleProvider } from 'minio/dist/esm/AssumeRoleProvider.mjs'
import type { JobError, UtilityJobResource } from '../contract/crd-schemas.js'
import type { RunnerCredentials } from '../contract/runner-protocol.js'
import {
  coveredByTenantGrant,
  GrantRefused,
  storageGrant,
  tenantGrant,
  type PolicyDocument,
} from '../contract/storage-grant.js'
import { tenantCode, tenantOf } from '../contract/tenants.js'
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

/** Asks storage for temporary credentials with `policy` as their session policy, for `seconds`. */
export type AssumeRole = (policy: PolicyDocument, seconds: number, sessionName: string) => Promise<RunnerCredentials>

/** One STS AssumeRole call per credential (GrantRefused when storage refuses the policy). */
export const stsAssumeRole =
  (sts: StsSettings): AssumeRole =>
  (policy, seconds, sessionName) =>
    assumeRole(sts, policy, seconds, sessionName)

async function assumeRole(
  sts: StsSettings,
  policy: PolicyDocument,
  seconds: number,
  sessionName: string,
): Promise<RunnerCredentials> {
  const provider = new AssumeRoleProvider({
    stsEndpoint: sts.endpoint,
    accessKey: sts.accessKey,
    secretKey: sts.secretKey,
    region: sts.region,
    durationSeconds: seconds,
    policy: JSON.stringify(policy),
    ...(sts.roleArn ? { roleArn: sts.roleArn, roleSessionName: sessionName.slice(0, 64) } : {}),
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
    expiresAt: new Date(Date.now() + seconds * 1000).toISOString(),
  }
}

/**
 * Issues each runner its own temporary credentials with STS AssumeRole and the job's session
 * policy: the effective permissions are the intersection of the operator's and the policy's, so
 * they cover the job's objects only, and they expire soon after its deadline.
 */
export function stsCredentialIssuer(sts: StsSettings, bucket: string): IssueCredentials {
  // The grant the gateway checked at accept, for the job as it is in the cluster (one made with
  // kubectl is checked here first): GrantRefused fails the job.
  const assume = stsAssumeRole(sts)
  return (uj, utility) => assume(storageGrant(uj.spec, bucket), sessionSeconds(uj, utility), uj.metadata.name)
}

export interface TenantGrantOptions {
  assume: AssumeRole
  bucket: string
  /** Every utility of the catalog (the outputs a job may chain from). */
  utilities: readonly string[]
  /** The grant of a job the tenant's grant does not cover (contract/storage-grant.ts coveredByTenantGrant). */
  perJob: IssueCredentials
  /** How many tenants' grants are kept (the least recently used goes first). */
  maxTenants?: number
  now?: () => number
  /** Counts each grant handed out: its scope, and whether storage was asked for it. */
  counted?: (scope: 'job' | 'tenant', source: 'issued' | 'reused') => void
}

/** How long a refused tenant grant is not asked for again (its jobs take grants of their own meanwhile). */
const TENANT_REFUSAL_MS = 10 * 60_000

/**
 * The credentials of pooled jobs (docs/adr/0049): one grant per tenant and utility, asked of STS
 * once and handed with each of the tenant's jobs to the pool pods that serve it (bound to that
 * tenant for life) while it has at least the job's own session left; a job it does not cover
 * takes its own grant (`perJob`), as does every job while storage refuses the tenant's.
 */
export function tenantCredentialIssuer(o: TenantGrantOptions): IssueCredentials {
  const now = o.now ?? Date.now
  const max = o.maxTenants ?? 1000
  const grants = new Map<string, { expiresAtMs: number; credentials?: Promise<RunnerCredentials> }>()
  const perJob: IssueCredentials = (uj, utility) => {
    o.counted?.('job', 'issued')
    return o.perJob(uj, utility)
  }
  return async (uj, utility) => {
    const tenant = tenantOf(uj.spec)
    const granted = { code: tenantCode(tenant), utility: utility.slug, utilities: o.utilities }
    if (!coveredByTenantGrant(uj.spec, granted)) return perJob(uj, utility)
    const key = `${tenant}\0${utility.slug}`
    const at = now()
    const kept = grants.get(key)
    if (kept && !kept.credentials && kept.expiresAtMs > at) return perJob(uj, utility)
    // A refused grant (storage takes no such policy) sends its jobs to grants of their own.
    const orOwn = (credentials: Promise<RunnerCredentials>) =>
      credentials.catch((err: unknown) => {
        if (err instanceof GrantRefused) return perJob(uj, utility)
        throw err
      })
    if (kept?.credentials && kept.expiresAtMs - at >= sessionSeconds(uj, utility) * 1000) {
      o.counted?.('tenant', 'reused')
      return orOwn(kept.credentials)
    }
    let policy: PolicyDocument
    try {
      policy = tenantGrant(granted, o.bucket)
    } catch {
      return perJob(uj, utility)
    }
    const entry = {
      expiresAtMs: at + MAX_SESSION_SECONDS * 1000,
      credentials: o.assume(policy, MAX_SESSION_SECONDS, `tenant-${granted.code}-${utility.slug}`),
    }
    grants.delete(key)
    grants.set(key, entry)
    if (grants.size > max) grants.delete(grants.keys().next().value!)
    o.counted?.('tenant', 'issued')
    // Storage unreachable: the next job asks again. Refused: not again for a while.
    entry.credentials.catch((err: unknown) => {
      if (grants.get(key) !== entry) return
      if (err instanceof GrantRefused) grants.set(key, { expiresAtMs: now() + TENANT_REFUSAL_MS })
      else grants.delete(key)
    })
    return orOwn(entry.credentials)
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
