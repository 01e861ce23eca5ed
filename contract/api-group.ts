/** Kubernetes API coordinates of dutil's custom resources, shared by every program. */
export const API_GROUP = 'dutil.io'
export const API_VERSION = 'v1alpha1'
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}`

export const UTILITY_JOB = {
  kind: 'UtilityJob',
  plural: 'utilityjobs',
  singular: 'utilityjob',
  shortNames: ['uj'],
} as const
export const API_KEY = { kind: 'ApiKey', plural: 'apikeys', singular: 'apikey', shortNames: ['dak'] } as const

/** Labels and annotations dutil puts on its objects. */
export const ANNOTATIONS = {
  /** A redelivery request for the job's callback: the time it was asked for (ISO-8601). */
  redeliver: 'dutil.io/redeliver',
  /**
   * The job's W3C trace context (`traceparent`), set by the gateway when tracing is on: the
   * operator's, the runner's and the callback's spans join the trace of the call that made it.
   */
  traceparent: 'dutil.io/traceparent',
} as const

export const LABELS = {
  apiKey: 'dutil.io/api-key',
  utility: 'dutil.io/utility',
  jobId: 'dutil.io/job-id',
  keyHash: 'dutil.io/key-hash',
  managedBy: 'app.kubernetes.io/managed-by',
  /** A pool runner pod (pool mode): the utility it serves. */
  pool: 'dutil.io/pool',
  /** A pool pod bound to a tenant: an opaque hash of the tenant; it serves no other for its whole life. */
  poolTenant: 'dutil.io/pool-tenant',
} as const

export const MANAGED_BY = 'dutil'

/**
 * Finalizer on every UtilityJob: the operator removes it once the job's final row is in the job
 * record and its callback has settled, so deleting a UtilityJob never loses its history.
 */
export const JOB_RECORD_FINALIZER = 'dutil.io/job-record'
