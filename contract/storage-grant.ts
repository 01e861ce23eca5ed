import { inputObjectKey, progressObjectKey, resultObjectKey } from './runner-protocol.js'
import { codeOfJobId, FILE_BATCH_CHARS, jobIdPattern } from './ids.js'
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
 * The units s3:// inputs are granted by: a source job's whole output prefix
 * (`<utility>/<YYYY-MM-DD>/<job_id>/`), an upload's own (`uploads/<code>/<YYYY-MM-DD>/<file_id>/`),
 * or, for two or more files one request uploaded together, their batch's
 * (`uploads/<code>/<YYYY-MM-DD>/file_<first 22 characters of the ULID>`: contract/ids.ts newFileBatch),
 * never a file's own name. The gateway checked that the caller owns every source job and upload,
 * so every object under such a prefix is already the caller's (file ids share those 22
 * characters only within one batch); the grant does not depend on file names, so it neither
 * grows with them (a merge of one long-named file from each of ten jobs) nor takes their
 * characters into a policy (`~$budget.pdf`, `*`, `?`, which IAM and MinIO would read as globs or
 * variables), and a request's hundred files cost one entry. Throws {@link GrantRefused} for a key
 * that is no job's output and no upload: nothing else is ever granted.
 */
export function grantSourcesOf(keys: readonly string[]): string[] {
  const sources = new Set<string>()
  const batches = new Map<string, Set<string>>()
  for (const key of keys) {
    const owner = outputKeyOwner(key)
    if (owner) {
      sources.add(`${owner.utility}/${owner.day}/${owner.jobId}/`)
      continue
    }
    const upload = uploadKeyOwner(key)
    if (!upload)
      throw new GrantRefused(`${JSON.stringify(key.slice(0, 200))} is not an output file of a job or an upload.`)
    const batch = `uploads/${upload.code ? `${upload.code}/` : ''}${upload.day}/${upload.fileId.slice(0, 'file_'.length + FILE_BATCH_CHARS)}`
    const ids = batches.get(batch) ?? new Set<string>()
    batches.set(batch, ids.add(upload.fileId))
  }
  for (const [batch, ids] of batches) {
    if (ids.size > 1) sources.add(batch)
    else for (const id of ids) sources.add(`${batch.slice(0, batch.lastIndexOf('/') + 1)}${id}/`)
  }
  return [...sources]
}

/**
 * The one shape of a runner's session policy (pure): read the input record of `jobId` (one job's
 * id, or the pattern of a tenant's) and `reads`; write (and abort a multipart upload, remove a
 * partial output) `outputs`; write the result manifest, and write and delete the progress report
 * (rewritten as it goes, deleted if the run fails), of `jobId`. Keys, not ARNs.
 */
function runnerPolicy(bucket: string, jobId: string, reads: string[], outputs: string): PolicyDocument {
  const arn = (key: string) => `arn:aws:s3:::${bucket}/${key}`
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: ['s3:GetObject'], Resource: [inputObjectKey(jobId), ...reads].map(arn) },
      {
        Effect: 'Allow',
        Action: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts', 's3:DeleteObject'],
        Resource: [arn(outputs)],
      },
      { Effect: 'Allow', Action: ['s3:PutObject'], Resource: [arn(resultObjectKey(jobId))] },
      { Effect: 'Allow', Action: ['s3:PutObject', 's3:DeleteObject'], Resource: [arn(progressObjectKey(jobId))] },
    ],
  }
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
  const sources = grantSourcesOf(job.storageInputKeys ?? [])
  const ownKeys = [own, inputObjectKey(job.jobId), resultObjectKey(job.jobId), progressObjectKey(job.jobId)]
  const globbed = [bucket, ...ownKeys, ...sources].find(hasGlob)
  if (globbed) throw new GrantRefused(`${JSON.stringify(globbed.slice(0, 200))} holds a glob character.`)
  const policy = runnerPolicy(
    bucket,
    job.jobId,
    sources.map((p) => `${p}*`),
    `${own}*`,
  )
  const chars = JSON.stringify(policy).length
  if (chars > MAX_SESSION_POLICY_CHARS)
    throw new GrantRefused(
      `The job's storage grant for ${sources.length} source jobs and uploads would be ${chars} characters, above the ${MAX_SESSION_POLICY_CHARS} storage takes; name files of fewer jobs, or upload them together in one request.`,
    )
  return policy
}

/** What a tenant's grant is for: the pool pods of one utility bound to one tenant (docs/adr/0049). */
export interface GrantedTenant {
  /** The tenant's code (contract/tenants.ts). */
  code: string
  /** The utility whose outputs the pods write. */
  utility: string
  /** Every utility of the catalog: the outputs a job may chain from. */
  utilities: readonly string[]
}

/**
 * Whether a tenant's grant covers a job (pure): the job's id carries the tenant's code, and every
 * s3:// input is an output of a job whose id carries it (of a utility of the catalog) or an
 * upload stored under it. Anything else (a job or an upload made before codes, a job whose id was
 * chosen by hand, a playground run of a person's key's outputs) takes a grant of its own.
 */
export function coveredByTenantGrant(job: GrantedJob, tenant: GrantedTenant): boolean {
  if (codeOfJobId(job.jobId) !== tenant.code || job.utility !== tenant.utility) return false
  return (job.storageInputKeys ?? []).every((key) => {
    const owner = outputKeyOwner(key)
    if (owner) return codeOfJobId(owner.jobId) === tenant.code && tenant.utilities.includes(owner.utility)
    return uploadKeyOwner(key)?.code === tenant.code
  })
}

/**
 * What the pool pods of one utility bound to one tenant may do in storage (pure), for as long as
 * they serve it. Read: the tenant's jobs' input records and outputs (of every utility) and its
 * uploads. Write (and abort a multipart upload, remove a partial output): outputs of the tenant's
 * jobs of this utility, and their result manifests and progress reports. Every pattern is anchored
 * at each character (`?` for one character): a job id's code sits at a fixed place, outputs sit
 * at `<utility>/<YYYY-MM-DD>/<job_id>/`, and only the gateway writes under `uploads/<code>/`, so no
 * key of another tenant matches. Its size does not grow with a job's inputs.
 */
export function tenantGrant(t: GrantedTenant, bucket: string): PolicyDocument {
  const jobs = jobIdPattern(t.code)
  const outputs = (utility: string) => `${utility}/????-??-??/${jobs}/*`
  const named = [bucket, t.code, ...t.utilities].find(hasGlob)
  if (named) throw new GrantRefused(`${JSON.stringify(named.slice(0, 200))} holds a glob character.`)
  const policy = runnerPolicy(bucket, jobs, [...t.utilities.map(outputs), `uploads/${t.code}/*`], outputs(t.utility))
  const chars = JSON.stringify(policy).length
  if (chars > MAX_SESSION_POLICY_CHARS)
    throw new GrantRefused(`A tenant's storage grant for ${t.utilities.length} utilities would be ${chars} characters.`)
  return policy
}
