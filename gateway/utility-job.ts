import { ANNOTATIONS, API_GROUP_VERSION, JOB_RECORD_FINALIZER, LABELS, MANAGED_BY } from '../contract/api-group.js'
import type { UtilityJobResource, UtilityJobSpec } from '../contract/crd-schemas.js'
import { objectNameOf } from '../contract/ids.js'
import { namedOwner } from '../contract/owners.js'
import { inputObjectKey } from '../contract/runner-protocol.js'
import { isoMs } from '../contract/time.js'

/** A run request's body once validated (the utility's schema, the callback URL's rules). */
export interface RunRequest {
  input: Record<string, unknown>
  metadata?: Record<string, unknown>
  callbackUrl?: string
}

/** Whom a job is run for: an API key, or a person in the console's playground (no key). */
export type JobOwner = { kind: 'key'; id: string; name: string; owner: string } | { kind: 'playground'; email: string }

export interface NewJob {
  jobId: string
  now: number
  utility: string
  mode: 'sync' | 'async'
  owner: JobOwner
  request: RunRequest
  /** The `s3://` inputs the request reads (checked readable by the caller). */
  storageInputKeys: string[]
  idempotencyKeyHash?: string
  /** Tests only: a shorter time limit than the utility's. */
  deadlineSeconds?: number
}

/** The spec of a new job: the one place the API path and the playground both build it. */
export function newJobSpec(j: NewJob): UtilityJobSpec {
  const owner =
    j.owner.kind === 'key'
      ? { apiKeyId: j.owner.id, apiKeyName: j.owner.name, owner: j.owner.owner }
      : {
          apiKeyId: '',
          apiKeyName: '',
          source: 'playground' as const,
          userEmail: j.owner.email,
          owner: namedOwner(j.owner.email),
        }
  return {
    jobId: j.jobId,
    utility: j.utility,
    mode: j.mode,
    ...owner,
    createdAt: isoMs(j.now),
    inputKey: inputObjectKey(j.jobId),
    metadata: j.request.metadata ?? null,
    ...(j.request.callbackUrl ? { callbackUrl: j.request.callbackUrl } : {}),
    ...(j.storageInputKeys.length ? { storageInputKeys: j.storageInputKeys } : {}),
    ...(j.idempotencyKeyHash ? { idempotencyKeyHash: j.idempotencyKeyHash } : {}),
    ...(j.deadlineSeconds !== undefined && Number.isInteger(j.deadlineSeconds) && j.deadlineSeconds > 0
      ? { deadlineSeconds: j.deadlineSeconds }
      : {}),
  }
}

/**
 * The UtilityJob of a job's spec: its name from the job id, its labels (the key's object when it
 * has a key), the trace context of the call that made it, and the finalizer that keeps it until
 * the operator has written the final row and settled the callback (ADR 0010). Pure; every
 * UtilityJob the gateway creates is made here.
 */
export function utilityJobResource(
  spec: UtilityJobSpec,
  keyObjectName?: string,
  traceparent?: string,
): UtilityJobResource {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: 'UtilityJob',
    metadata: {
      name: objectNameOf(spec.jobId),
      labels: {
        [LABELS.managedBy]: MANAGED_BY,
        ...(keyObjectName ? { [LABELS.apiKey]: keyObjectName } : {}),
        [LABELS.utility]: spec.utility,
      },
      ...(traceparent ? { annotations: { [ANNOTATIONS.traceparent]: traceparent } } : {}),
      finalizers: [JOB_RECORD_FINALIZER],
    },
    spec,
  }
}
