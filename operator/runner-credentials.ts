import { AssumeRoleProvider } from 'minio/dist/esm/AssumeRoleProvider.mjs'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import {
  inputObjectKey,
  progressObjectKey,
  resultObjectKey,
  type RunnerCredentials,
} from '../contract/runner-protocol.js'
import { outputKeyOwner } from '../contract/storage-inputs.js'
import { outputKey } from '../contract/storage-keys.js'
import { parseTime } from '../contract/time.js'
import type { UtilityDefinition } from '../contract/utility.js'
import { deadlineSeconds } from './desired-job.js'

/** Past the deadline, so a slow start or a retried pod does not strand a runner without access. */
const GRACE_SECONDS = 600
/** STS bounds on a session's length (AWS and MinIO: 15 minutes to 12 hours). */
const MIN_SESSION_SECONDS = 900
const MAX_SESSION_SECONDS = 43_200

export interface PolicyDocument {
  Version: '2012-10-17'
  Statement: Array<{ Effect: 'Allow'; Action: string[]; Resource: string[] }>
}

/** Glob characters in an IAM resource ARN: an object key containing them must not widen the grant. */
const hasWildcard = (key: string) => /[*?$]/.test(key)

/** Storage services cap a session policy's size (AWS STS and MinIO: 2,048 characters of JSON). */
export const MAX_SESSION_POLICY_CHARS = 2048

/**
 * What the runner reads of its s3:// inputs: one input of a source job by its key; two or more
 * by that job's output prefix, so that a merge of many pages of one earlier job stays within
 * the policy's size (the gateway checked that the caller's key owns every source job, and so
 * every file under its prefix). Keys that are not job outputs stay exact.
 */
function storageReads(keys: readonly string[]): string[] {
  const byJob = new Map<string, string[]>()
  const exact: string[] = []
  for (const key of keys) {
    const owner = outputKeyOwner(key)
    if (!owner) exact.push(key)
    else {
      const prefix = `${owner.utility}/${owner.day}/${owner.jobId}/`
      byJob.set(prefix, [...(byJob.get(prefix) ?? []), key])
    }
  }
  const reads = [...exact]
  for (const [prefix, ofJob] of byJob) reads.push(...(new Set(ofJob).size > 1 ? [`${prefix}*`] : [ofJob[0]]))
  return reads
}

/**
 * What one job's runner may do in storage, as an IAM session policy (pure). Read: its input
 * record and the s3:// inputs the gateway checked it may chain from. Write (and abort a
 * multipart upload or remove a partial output): objects under its own output prefix, and its
 * result manifest. No listing, no other object: a compromised runner reaches its own job and
 * its own key's source jobs only.
 */
export function runnerPolicy(uj: UtilityJobResource, utility: UtilityDefinition, bucket: string): PolicyDocument {
  const jobId = uj.spec.jobId
  const prefix = outputKey(utility.slug, parseTime(uj.spec.createdAt)!, jobId, '')
  const arn = (key: string) => `arn:aws:s3:::${bucket}/${key}`
  const inputs = uj.spec.storageInputKeys ?? []
  const unsafeInput = inputs.find(hasWildcard)
  if (unsafeInput)
    throw new Error(
      `refusing to grant storage access to a key with wildcard characters: ${JSON.stringify(unsafeInput)}`,
    )
  const sourceReads = storageReads(inputs)
  const reads = [inputObjectKey(jobId), ...sourceReads]
  const unsafe = [prefix, inputObjectKey(jobId)].find(hasWildcard)
  if (unsafe)
    throw new Error(`refusing to grant storage access to a key with wildcard characters: ${JSON.stringify(unsafe)}`)
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: ['s3:GetObject'], Resource: reads.map(arn) },
      {
        Effect: 'Allow',
        Action: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts', 's3:DeleteObject'],
        Resource: [arn(`${prefix}*`)],
      },
      { Effect: 'Allow', Action: ['s3:PutObject'], Resource: [arn(resultObjectKey(jobId))] },
      // Its progress report: rewritten as it goes, deleted if the run fails.
      { Effect: 'Allow', Action: ['s3:PutObject', 's3:DeleteObject'], Resource: [arn(progressObjectKey(jobId))] },
    ],
  }
}

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
    const provider = new AssumeRoleProvider({
      stsEndpoint: sts.endpoint,
      accessKey: sts.accessKey,
      secretKey: sts.secretKey,
      region: sts.region,
      durationSeconds: sessionSeconds(uj, utility),
      policy: JSON.stringify(runnerPolicy(uj, utility, bucket)),
      ...(sts.roleArn ? { roleArn: sts.roleArn, roleSessionName: uj.metadata.name.slice(0, 64) } : {}),
    })
    const c = await provider.getCredentials()
    return {
      accessKey: c.accessKey,
      secretKey: c.secretKey,
      sessionToken: c.sessionToken ?? '',
      expiresAt: new Date(Date.now() + sessionSeconds(uj, utility) * 1000).toISOString(),
    }
  }
}
