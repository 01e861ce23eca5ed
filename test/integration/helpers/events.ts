import { CoreV1Api } from '@kubernetes/client-node'
import { kubeConfig } from './keys.js'

export interface SeenEvent {
  type: string
  reason: string
  message: string
  reportingController: string
}

/** The Events about a UtilityJob, oldest first, as kubectl describe finds them (core/v1 view). */
export async function eventsOf(objectName: string): Promise<SeenEvent[]> {
  const list = await kubeConfig()
    .makeApiClient(CoreV1Api)
    .listNamespacedEvent({
      namespace: 'dutil',
      fieldSelector: `involvedObject.name=${objectName},involvedObject.kind=UtilityJob`,
    })
  const when = (e: (typeof list.items)[number]) =>
    new Date(e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp ?? 0).getTime()
  return [...list.items]
    .sort((a, b) => when(a) - when(b))
    .map((e) => ({
      type: e.type ?? '',
      reason: e.reason ?? '',
      message: e.message ?? '',
      reportingController: e.reportingComponent ?? '',
    }))
}
