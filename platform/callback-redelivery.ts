import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node'
import { ANNOTATIONS, API_GROUP, API_VERSION, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'
import { effectiveStatus } from '../contract/job-view.js'
import { isoMs } from '../contract/time.js'

/** Delivery rounds a job's callback may have: the first and up to 9 redeliveries (the log keeps 100 attempts). */
export const CALLBACK_MAX_ROUNDS = 10

/**
 * Why a job's callback cannot be sent again now, or null when it can. A redelivery needs the
 * job's UtilityJob (the operator's callback controller delivers from it): a job that has left
 * the cluster (DUTIL_JOB_GRACE_SECONDS after it finished and its callback settled) is kept in
 * the job record only.
 */
export function redeliveryProblem(uj: UtilityJobResource | undefined): string | null {
  if (!uj)
    return 'The job has left the cluster (it is kept in the job record only): a callback can be sent again until an hour (DUTIL_JOB_GRACE_SECONDS) after its last delivery ended.'
  if (uj.spec.mode !== 'async' || !uj.spec.callbackUrl) return 'The job has no callback.'
  const state = effectiveStatus(uj).state
  if (state === 'cancelled') return 'A cancelled job sends no callback.'
  if (state !== 'succeeded' && state !== 'failed') return 'The job has not finished; its callback is sent when it does.'
  const d = uj.status?.callback
  if (!d || d.status === 'pending')
    return `A delivery of this callback is under way${d ? ` (attempt ${d.attempts})` : ''}.`
  if ((d.round ?? 1) >= CALLBACK_MAX_ROUNDS)
    return `This callback has been sent in ${CALLBACK_MAX_ROUNDS} rounds already; it cannot be sent again.`
  return null
}

/**
 * Asks the operator to send the job's callback again: the same event with the same webhook-id
 * (the job id), so receivers that de-duplicate stay correct. The request is an annotation with
 * its time; the callback controller answers it with a new round of attempts.
 */
export async function requestRedelivery(
  custom: Pick<CustomObjectsApi, 'patchNamespacedCustomObject'>,
  namespace: string,
  name: string,
  now = Date.now(),
): Promise<string> {
  const at = isoMs(now)
  await custom.patchNamespacedCustomObject(
    {
      group: API_GROUP,
      version: API_VERSION,
      namespace,
      plural: UTILITY_JOB.plural,
      name,
      body: { metadata: { annotations: { [ANNOTATIONS.redeliver]: at } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  )
  return at
}
