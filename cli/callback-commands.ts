import { CustomObjectsApi } from '@kubernetes/client-node'
import { API_GROUP, API_VERSION, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { objectNameOf, ulidOf } from '../contract/ids.js'
import { redeliveryProblem, requestRedelivery } from '../platform/callback-redelivery.js'
import { apiStatus } from '../platform/kube.js'
import type { KubeTarget } from './kube-target.js'
import { UsageError } from './usage-error.js'

/** `dutil callbacks redeliver JOB_ID`: asks the operator for a new delivery round (platform/callback-redelivery.ts). */
export async function redeliver(target: KubeTarget, id: string): Promise<string> {
  if (!ulidOf(id, 'job')) throw new UsageError(`${id} is not a job id (job_...)`)
  const custom = target.load().makeApiClient(CustomObjectsApi)
  const name = objectNameOf(id)
  let uj: UtilityJobResource | undefined
  try {
    uj = (await custom.getNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: target.namespace,
      plural: UTILITY_JOB.plural,
      name,
    })) as UtilityJobResource
  } catch (err) {
    if (apiStatus(err) !== 404) throw err
  }
  const problem = redeliveryProblem(uj)
  if (problem) throw new Error(`cannot redeliver ${id}: ${problem}`)
  const at = await requestRedelivery(custom, target.namespace, name)
  return `Redelivery of ${id}'s callback asked for at ${at} (round ${(uj!.status?.callback?.round ?? 1) + 1}); the operator sends it with the same webhook-id.`
}
