import { inputObjectKey, progressObjectKey, resultObjectKey } from './runner-protocol.js'
import { outputKeyOwner, uploadKeyOwner } from './storage-inputs.js'
import { outputKey } from './storage-keys.js'
import { parseTime } from './time.js'

/**
 * A runner's storage grant: the IAM session policy of the temporary credentials the operator
 * issues for one job (docs/adr/0011). It is a pure function of the job's spec, so the gateway
 * decides at accept whether storage can issue it (a refusal is a 400 there, before any job
 * exists) and the operator asks for exactly that grant when the job starts.
 */
export interface PolicyDocument {
  Version: '2012-10-17'
  Statement: Array<{ Effect: 'Allow'; Action: string[]; Resource: string[] }>
}

/** What of a job the grant depends on. */
export interface GrantedJob {
  jobId: string
  utility: string
  createdAt: string
  /** The s3:// inputs the gateway checked the caller may read. */
  storageInputKeys?: string[]
}

/** Storage services cap a session policy's size (AWS STS and MinIO: 2,048 characters of JSON). */
export const MAX_SESSION_POLICY_CHARS = 2048

/** Glob characters and policy variables in an IAM resource ARN: a grant never holds them outside its own `*`. */
const hasGlob = (key: string) => /[*?$]/.test(key)

/** A grant that cannot be issued: its message says why (the gateway answers it as a 400). */
export class GrantRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'GrantRefused'
  }
}

/**
 * The unit an s3:// input is granted by: its source job's whole output prefix
 * (`<utility>/<YYYY-MM-DD>/<job_id>/`), or an upload's own (`uploads/<YYYY-MM-DD>/<file_id>/`),
 * never the file's own name. The gateway checked that the
 * caller owns the source job, so every object under that prefix is already the caller's; the
 * grant does not depend on file names, so it neither grows with them (a merge of one long-named
 * file from each of ten jobs) nor takes their characters into a policy (`~$budget.pdf`, `*`, `?`,
 * which IAM and MinIO would read as globs or variables). Null for a key that is no job's output:
 * nothing else is ever granted.
 */
export function sourcePrefixOf(key: string): string | null {
  const owner = outputKeyOwner(key)
  if (owner) return `${owner.utility}/${owner.day}/${owner.jobId}/`
  const upload = uploadKeyOwner(key)
  return upload ? `uploads/${upload.day}/${upload.fileId}/` : null
}

/**
 * What one job's runner may do in storage (pure). Read: its input record and the output
 * prefixes of the source jobs its s3:// inputs name. Write (and abort a multipart upload or
 * remove a partial output): objects under its own output prefix, and its result manifest and
 * progress report. No listing, no other object. Throws {@link GrantRefused} when the grant
 * would name anything but those, or when storage would refuse its size.
 */
export function storageGrant(job: GrantedJob, bucket: string): PolicyDocument {
  const createdAt = parseTime(job.createdAt)
  if (createdAt === null) throw new GrantRefused('The job has no valid creation time.')
  const own = outputKey(job.utility, createdAt, job.jobId, '')
  const arn = (key: string) => `arn:aws:s3:::${bucket}/${key}`
  const sources = new Set<string>()
  for (const key of job.storageInputKeys ?? []) {
    const prefix = sourcePrefixOf(key)
    if (!prefix)
      throw new GrantRefused(`${JSON.stringify(key.slice(0, 200))} is not an output file of a job or an upload.`)
    sources.add(prefix)
  }
  const ownKeys = [own, inputObjectKey(job.jobId), resultObjectKey(job.jobId), progressObjectKey(job.jobId)]
  const globbed = [bucket, ...ownKeys, ...sources].find(hasGlob)
  if (globbed) throw new GrantRefused(`${JSON.stringify(globbed.slice(0, 200))} holds a glob character.`)
  const policy: PolicyDocument = {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['s3:GetObject'],
        Resource: [inputObjectKey(job.jobId), ...[...sources].map((p) => `${p}*`)].map(arn),
      },
      {
        Effect: 'Allow',
        Action: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts', 's3:DeleteObject'],
        Resource: [arn(`${own}*`)],
      },
      { Effect: 'Allow', Action: ['s3:PutObject'], Resource: [arn(resultObjectKey(job.jobId))] },
      // Its progress report: rewritten as it goes, deleted if the run fails.
      { Effect: 'Allow', Action: ['s3:PutObject', 's3:DeleteObject'], Resource: [arn(progressObjectKey(job.jobId))] },
    ],
  }
  const chars = JSON.stringify(policy).length
  if (chars > MAX_SESSION_POLICY_CHARS)
    throw new GrantRefused(
      `The job's storage grant for ${sources.size} source jobs would be ${chars} characters, above the ${MAX_SESSION_POLICY_CHARS} storage takes; name files of fewer jobs.`,
    )
  return policy
}
