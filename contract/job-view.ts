import type { CallbackDelivery, UtilityJobSpec, UtilityJobStatus, JobState } from './crd-schemas.js'
import { TERMINAL_STATES } from './crd-schemas.js'
import { ANNOTATIONS } from './api-group.js'

/**
 * What a job view is built from, whichever source holds the job: a live UtilityJob (spec +
 * status subresource) or its row in the job record (platform/db/job-row.ts). One function,
 * `toJobView`, turns either into the API's JSON.
 */
export interface JobRecord {
  spec: UtilityJobSpec
  status?: UtilityJobStatus
  /** A UtilityJob's own; a row gives back the annotations it keeps (the trace context). */
  metadata?: { annotations?: Record<string, string> }
}

/** The job's W3C trace context, when it was accepted with tracing on. */
export function traceparentOfJob(job: JobRecord): string | undefined {
  return job.metadata?.annotations?.[ANNOTATIONS.traceparent]
}

/** The trace id of a traced job (the second field of its `traceparent`). */
export function traceIdOfJob(job: JobRecord): string | undefined {
  const id = traceparentOfJob(job)?.split('-')[1]
  return id && /^[0-9a-f]{32}$/.test(id) ? id : undefined
}

export interface FileLink {
  url: string
  /** Present only for presigned links. */
  expiresAt?: string
}

export interface FileReferenceView {
  url: string
  key: string
  name: string
  size: number | null
  contentType: string | null
  urlExpiresAt?: string
  pageNumber?: number
  path?: string
}

export interface JobView {
  id: string
  object: 'job'
  utility: string
  mode: 'sync' | 'async'
  status: JobState
  createdAt: string
  startedAt: string | null
  finishedAt: string | null
  timings: { queueMs: number | null; upstreamMs: number | null; storageMs: number | null; totalMs: number | null }
  /** An extension of the contract (additive, v1): how far the runner has got; null when it reports none. */
  progress: { done: number; total: number | null; unit: string; updatedAt: string } | null
  metadata: Record<string, unknown> | null
  result: ({ files: FileReferenceView[] } & Record<string, unknown>) | null
  error: { code: string; message: string; upstreamStatus?: number } | null
  callback: { url: string; status: 'pending' | 'delivered' | 'failed'; attempts: number } | null
  links: { self: string }
}

/**
 * The status a job has before the operator first wrote one: queued, sync jobs included (they
 * wait for a run slot like the rest, docs/adr/0013; one admitted at once starts with queueMs 0).
 */
export function initialStatus(_job: JobRecord): UtilityJobStatus {
  return {
    state: 'queued',
    startedAt: null,
    finishedAt: null,
    timings: { queueMs: null, upstreamMs: null, storageMs: null, totalMs: null },
    result: null,
    error: null,
  }
}

export function effectiveStatus(job: JobRecord): UtilityJobStatus {
  return job.status?.state ? job.status : initialStatus(job)
}

export function isTerminal(job: JobRecord): boolean {
  return TERMINAL_STATES.includes(effectiveStatus(job).state)
}

/**
 * The job exactly as `GET /v1/jobs/{id}` returns it. Pure: links for stored files are made by
 * the caller (presigning needs storage credentials) and passed in by storage key.
 */
export function toJobView(job: JobRecord, linkFor: (key: string) => FileLink): JobView {
  const status = effectiveStatus(job)
  const spec = job.spec
  return {
    id: spec.jobId,
    object: 'job',
    utility: spec.utility,
    mode: spec.mode,
    status: status.state,
    createdAt: spec.createdAt,
    startedAt: status.startedAt ?? null,
    finishedAt: status.finishedAt ?? null,
    timings: {
      queueMs: status.timings?.queueMs ?? null,
      upstreamMs: status.timings?.upstreamMs ?? null,
      storageMs: status.timings?.storageMs ?? null,
      totalMs: status.timings?.totalMs ?? null,
    },
    progress: status.progress
      ? {
          done: status.progress.done,
          total: status.progress.total,
          unit: status.progress.unit,
          updatedAt: status.progress.updatedAt,
        }
      : null,
    metadata: spec.metadata ?? null,
    result: status.state === 'succeeded' && status.result ? resultView(status.result, linkFor) : null,
    error: status.state === 'failed' && status.error ? errorView(status.error) : null,
    callback: spec.callbackUrl ? callbackView(spec.callbackUrl, status.callback) : null,
    links: { self: `/v1/jobs/${spec.jobId}` },
  }
}

/** The callback as clients see it; `pending` with 0 attempts until the callback controller writes. */
function callbackView(url: string, delivery: CallbackDelivery | undefined): NonNullable<JobView['callback']> {
  return { url, status: delivery?.status ?? 'pending', attempts: delivery?.attempts ?? 0 }
}

function resultView(result: NonNullable<UtilityJobStatus['result']>, linkFor: (key: string) => FileLink) {
  const files = result.files.map((f): FileReferenceView => {
    const link = linkFor(f.key)
    const ref: FileReferenceView = {
      url: link.url,
      key: f.key,
      name: f.name,
      size: f.size ?? null,
      contentType: f.contentType ?? null,
    }
    if (link.expiresAt) ref.urlExpiresAt = link.expiresAt
    if (f.pageNumber !== undefined) ref.pageNumber = f.pageNumber
    if (f.path !== undefined) ref.path = f.path
    return ref
  })
  return { files, ...(result.extras ?? {}) }
}

function errorView(error: NonNullable<UtilityJobStatus['error']>) {
  const view: { code: string; message: string; upstreamStatus?: number } = { code: error.code, message: error.message }
  if (error.upstreamStatus !== undefined) view.upstreamStatus = error.upstreamStatus
  return view
}
