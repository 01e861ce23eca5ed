import type {
  CallbackDelivery,
  JobError,
  JobProgress,
  UtilityJobSpec,
  UtilityJobStatus,
} from '../../contract/crd-schemas.js'
import { createdAtOfId } from '../../contract/ids.js'
import { effectiveStatus, type JobRecord, traceparentOfJob } from '../../contract/job-view.js'
import { ANNOTATIONS } from '../../contract/api-group.js'

export type { JobRecord }

/** One row of the `jobs` table, as node-postgres returns it (timestamps as ISO text). */
export interface JobRow {
  id: string
  created_at: string
  api_key_id: string
  api_key_name: string
  source: 'api' | 'playground'
  user_email: string | null
  utility: string
  mode: 'sync' | 'async'
  state: UtilityJobStatus['state']
  input_key: string
  metadata: Record<string, unknown> | null
  callback_url: string | null
  idempotency_key_hash: string | null
  deadline_seconds: number | null
  started_at: string | null
  finished_at: string | null
  queue_ms: number | null
  upstream_ms: number | null
  storage_ms: number | null
  total_ms: number | null
  result: UtilityJobStatus['result']
  error: JobError | null
  callback: CallbackDelivery | null
  progress: JobProgress | null
  /** The job's W3C trace context, when it was accepted with tracing on. */
  traceparent: string | null
  /** Whose job it is (contract/owners.ts); null on rows written before owners. */
  owner: string | null
  /** Its input sealed, when it rode with the job (docs/adr/0043); null when it is stored. */
  sealed_input: string | null
}

export const JOB_COLUMNS: readonly (keyof JobRow)[] = [
  'id',
  'created_at',
  'api_key_id',
  'api_key_name',
  'source',
  'user_email',
  'utility',
  'mode',
  'state',
  'input_key',
  'metadata',
  'callback_url',
  'idempotency_key_hash',
  'deadline_seconds',
  'started_at',
  'finished_at',
  'queue_ms',
  'upstream_ms',
  'storage_ms',
  'total_ms',
  'result',
  'error',
  'callback',
  'progress',
  'traceparent',
  'owner',
  'sealed_input',
]

/** The creation time of a job, from its id (ULIDs carry it): the partition key of its row. */
export function createdAtOfJobId(id: string): string | null {
  return createdAtOfId(id, 'job')
}

/** The row for a job as a UtilityJob (or a record) describes it; the status as the API shows it. */
export function rowOf(job: JobRecord): JobRow {
  const spec = job.spec
  const s = effectiveStatus(job)
  return {
    id: spec.jobId,
    created_at: spec.createdAt,
    api_key_id: spec.apiKeyId,
    api_key_name: spec.apiKeyName,
    source: spec.source ?? 'api',
    user_email: spec.userEmail ?? null,
    utility: spec.utility,
    mode: spec.mode,
    state: s.state,
    input_key: spec.inputKey,
    metadata: spec.metadata ?? null,
    callback_url: spec.callbackUrl ?? null,
    idempotency_key_hash: spec.idempotencyKeyHash ?? null,
    deadline_seconds: spec.deadlineSeconds ?? null,
    started_at: s.startedAt ?? null,
    finished_at: s.finishedAt ?? null,
    queue_ms: s.timings?.queueMs ?? null,
    upstream_ms: s.timings?.upstreamMs ?? null,
    storage_ms: s.timings?.storageMs ?? null,
    total_ms: s.timings?.totalMs ?? null,
    result: s.result ?? null,
    error: s.error ?? null,
    callback: s.callback ?? job.status?.callback ?? null,
    progress: s.progress ?? null,
    traceparent: traceparentOfJob(job) ?? null,
    owner: spec.owner ?? null,
    sealed_input: spec.sealedInput ?? null,
  }
}

const iso = (t: string | null): string | null => (t === null ? null : new Date(t).toISOString())

/** The record a row holds: the same spec and status a UtilityJob would. */
export function recordOf(row: JobRow): JobRecord {
  const spec: UtilityJobSpec = {
    jobId: row.id,
    utility: row.utility,
    mode: row.mode,
    apiKeyId: row.api_key_id,
    apiKeyName: row.api_key_name,
    createdAt: iso(row.created_at)!,
    inputKey: row.input_key,
    metadata: row.metadata,
  }
  if (row.source === 'playground') spec.source = 'playground'
  if (row.user_email !== null) spec.userEmail = row.user_email
  if (row.callback_url !== null) spec.callbackUrl = row.callback_url
  if (row.idempotency_key_hash !== null) spec.idempotencyKeyHash = row.idempotency_key_hash
  if (row.deadline_seconds !== null) spec.deadlineSeconds = row.deadline_seconds
  if (row.owner !== null) spec.owner = row.owner
  if (row.sealed_input) spec.sealedInput = row.sealed_input
  const status: UtilityJobStatus = {
    state: row.state,
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    timings: { queueMs: row.queue_ms, upstreamMs: row.upstream_ms, storageMs: row.storage_ms, totalMs: row.total_ms },
    result: row.result,
    error: row.error,
  }
  if (row.callback) status.callback = row.callback
  if (row.progress) status.progress = row.progress
  return row.traceparent
    ? { spec, status, metadata: { annotations: { [ANNOTATIONS.traceparent]: row.traceparent } } }
    : { spec, status }
}
