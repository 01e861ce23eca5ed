import { parseS3Url } from '../contract/storage-keys.js'
import { outputKeyOwner, storageUrlsOf, uploadKeyOwner } from '../contract/storage-inputs.js'
import { effectiveStatus, type JobRecord } from '../contract/job-view.js'
import { utcDay } from '../contract/time.js'
import { ApiError } from './api-error.js'

/**
 * `s3://` inputs name only what the caller may read: an output file of one of its own finished
 * jobs (so jobs chain), or one of its own unexpired uploads (POST /v1/files), nothing else: not inputs, result manifests, usage or another tenant's
 * files. Anything else is answered like another key's job: 404 `not_found`, whether or not the
 * object exists. The key is parsed by the same function the runner reads it with
 * (contract/storage-keys.ts parseS3Url), so no spelling can mean one key here and another there.
 * Returns the object keys: the job's runner credentials may read exactly these.
 */
export async function assertStorageInputsReadable(
  input: unknown,
  opts: {
    bucket: string
    find: (jobId: string) => Promise<JobRecord | undefined>
    owns: (job: JobRecord) => boolean
    /** The caller's own unexpired upload by id (none: uploads are not readable here). */
    upload?: (fileId: string) => Promise<{ storageKey: string } | undefined>
  },
): Promise<string[]> {
  const keys: string[] = []
  for (const { path, url } of storageUrlsOf(input)) {
    const refused = new ApiError(
      'not_found',
      `There is no file at ${path} that this caller may read; s3:// inputs name output files of the caller's own jobs and its own uploads.`,
    )
    const ref = parseS3Url(url)
    if (!ref || ref.bucket !== opts.bucket) throw refused
    const upload = uploadKeyOwner(ref.key)
    if (upload) {
      const own = opts.upload && (await opts.upload(upload.fileId))
      if (!own || own.storageKey !== ref.key) throw refused
      keys.push(ref.key)
      continue
    }
    const owner = outputKeyOwner(ref.key)
    if (!owner) throw refused
    const job = await opts.find(owner.jobId)
    if (
      !job ||
      !opts.owns(job) ||
      job.spec.jobId !== owner.jobId ||
      job.spec.utility !== owner.utility ||
      utcDay(Date.parse(job.spec.createdAt)) !== owner.day
    )
      throw refused
    const s = effectiveStatus(job)
    if (s.state !== 'succeeded' || !(s.result?.files ?? []).some((f) => f.key === ref.key)) throw refused
    keys.push(ref.key)
  }
  return [...new Set(keys)]
}
