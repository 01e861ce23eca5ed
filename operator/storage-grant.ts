import type { Client } from 'minio'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { inputObjectKey, resultObjectKey, type StorageGrant } from '../contract/runner-protocol.js'
import { outputKey } from '../contract/storage-keys.js'
import { parseTime } from '../contract/time.js'
import type { UtilityDefinition } from '../contract/utility.js'
import { deadlineSeconds } from './desired-job.js'

/** Past the deadline, so a slow start does not strand a runner without access. */
const GRACE_SECONDS = 600

/**
 * Presigned access for a runner with `storageAccess: 'scoped'`: its input, its result manifest
 * and a POST policy for its output prefix. Signed locally with the operator's credentials
 * against the endpoint the runner uses (`presigner`); no credentials leave the operator.
 */
export async function storageGrantFor(uj: UtilityJobResource, utility: UtilityDefinition, presigner: Client, bucket: string, now: Date): Promise<StorageGrant> {
  const jobId = uj.spec.jobId
  const expires = deadlineSeconds(uj, utility) + GRACE_SECONDS
  const prefix = outputKey(utility.slug, parseTime(uj.spec.createdAt)!, jobId, '')
  const maxBytes = utility.runner.maxOutputBytes ?? 100 * 1024 * 1024
  const policy = presigner.newPostPolicy()
  policy.setBucket(bucket)
  policy.setKeyStartsWith(prefix)
  policy.setContentLengthRange(0, maxBytes)
  policy.setContentTypeStartsWith('application/')
  policy.setExpires(new Date(now.getTime() + expires * 1000))
  const post = await presigner.presignedPostPolicy(policy)
  return {
    input: { key: inputObjectKey(jobId), url: await presigner.presignedUrl('GET', bucket, inputObjectKey(jobId), expires, {}, now) },
    result: { key: resultObjectKey(jobId), url: await presigner.presignedUrl('PUT', bucket, resultObjectKey(jobId), expires, {}, now) },
    outputs: { prefix, url: post.postURL, fields: post.formData, maxBytes },
    expiresAt: new Date(now.getTime() + expires * 1000).toISOString(),
  }
}
