import { randomBytes } from 'node:crypto'
import { type EventsV1Api, type EventsV1Event, V1MicroTime } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import { API_GROUP_VERSION, UTILITY_JOB } from '../contract/api-group.js'
import type { UtilityJobResource } from '../contract/crd-schemas.js'

/** Who reports dutil's Events (events.k8s.io/v1 `reportingController`). */
export const REPORTING_CONTROLLER = 'dutil.io/operator'

/** One thing that happened to a UtilityJob, as `kubectl describe utilityjob` shows it. */
export interface JobEvent {
  type: 'Normal' | 'Warning'
  /** UpperCamelCase, e.g. JobCreated, Started, Succeeded, UpstreamRejected, CallbackRetrying. */
  reason: string
  /** What the operator did or saw: Create, Start, Complete, Fail, Cancel, Deliver. */
  action: string
  note: string
  /** A second object the event concerns (the batch Job). */
  related?: { apiVersion: string; kind: string; name: string; uid?: string }
}

/** Records Events; never throws and never delays the caller (an Event is a courtesy). */
export interface EventRecorder {
  record(uj: UtilityJobResource, event: JobEvent): void
}

/** The events.k8s.io/v1 Event for `event` about `uj` (a pure function: the name is given). */
export function eventBody(
  uj: UtilityJobResource,
  event: JobEvent,
  name: string,
  now: Date,
  instance: string,
): EventsV1Event {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace: uj.metadata.namespace },
    eventTime: new V1MicroTime(now.getTime()),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: instance,
    action: event.action,
    reason: event.reason,
    type: event.type,
    // The API refuses notes longer than 1 kB.
    note: event.note.length > 1024 ? `${event.note.slice(0, 1021)}...` : event.note,
    regarding: {
      apiVersion: API_GROUP_VERSION,
      kind: UTILITY_JOB.kind,
      name: uj.metadata.name,
      namespace: uj.metadata.namespace,
      uid: uj.metadata.uid,
    },
    ...(event.related ? { related: { ...event.related, namespace: uj.metadata.namespace } } : {}),
  }
}

/** Events through the API server, named like the kubelet's: `<object>.<hex time><random>`. */
export function kubeEventRecorder(
  api: Pick<EventsV1Api, 'createNamespacedEvent'>,
  namespace: string,
  instance: string,
  log: Logger,
): EventRecorder {
  return {
    record(uj, event) {
      const now = new Date()
      const name = `${uj.metadata.name}.${now.getTime().toString(16)}${randomBytes(3).toString('hex')}`
      api
        .createNamespacedEvent({ namespace, body: eventBody(uj, event, name, now, instance) })
        .catch((err: unknown) => {
          log.warn(
            { jobId: uj.spec.jobId, reason: event.reason, err: err instanceof Error ? err.message : String(err) },
            'recording an event failed',
          )
        })
    },
  }
}
