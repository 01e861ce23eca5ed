import { CustomObjectsApi } from '@kubernetes/client-node'
import { inject } from 'vitest'
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  LABELS,
  MANAGED_BY,
  UTILITY_JOB,
} from '../../../contract/api-group.js'
import type { UtilityJobResource } from '../../../contract/crd-schemas.js'
import { newId, objectNameOf } from '../../../contract/ids.js'
import { inputObjectKey } from '../../../contract/runner-protocol.js'
import { storageClient, writeJsonObject } from '../../../platform/storage-client.js'
import { isoMs } from '../../../contract/time.js'
import { kubeConfig } from './keys.js'

const coords = { group: API_GROUP, version: API_VERSION, namespace: 'dutil', plural: UTILITY_JOB.plural }

/**
 * Creates a UtilityJob (split-pdf unless said) straight through the Kubernetes API, the way the gateway
 * does, for cases the public API refuses on purpose (a sync job with a callbackUrl, a
 * destination the gateway would turn away): the operator must not rely on the gateway.
 */
export async function createJobDirectly(opts: {
  keyId: string
  mode: 'sync' | 'async'
  callbackUrl?: string
  inputUrl: string
  utility?: string
  /** The s3:// inputs the grant names (the gateway's checks bypassed). */
  storageInputKeys?: string[]
}): Promise<UtilityJobResource> {
  const utility = opts.utility ?? 'split-pdf'
  const now = Date.now()
  const jobId = newId('job', now)
  const storage = inject('storage')
  await writeJsonObject(storageClient(storage), storage.bucket, inputObjectKey(jobId), { url: opts.inputUrl })
  const body: UtilityJobResource = {
    apiVersion: API_GROUP_VERSION,
    kind: 'UtilityJob',
    metadata: {
      name: objectNameOf(jobId),
      labels: {
        [LABELS.managedBy]: MANAGED_BY,
        [LABELS.apiKey]: objectNameOf(opts.keyId),
        [LABELS.utility]: utility,
      },
    },
    spec: {
      jobId,
      utility,
      mode: opts.mode,
      apiKeyId: opts.keyId,
      apiKeyName: 'direct',
      createdAt: isoMs(now),
      inputKey: inputObjectKey(jobId),
      metadata: null,
      ...(opts.callbackUrl ? { callbackUrl: opts.callbackUrl } : {}),
      ...(opts.storageInputKeys ? { storageInputKeys: opts.storageInputKeys } : {}),
    },
  }
  return (await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({ ...coords, body })) as UtilityJobResource
}

export async function readJob(name: string): Promise<UtilityJobResource> {
  return (await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ ...coords, name })) as UtilityJobResource
}
