import type { components } from './schema.js'

export type Job = components['schemas']['Job']
export type RequestErrorCode =
  'invalid_request' | 'unauthorized' | 'forbidden' | 'not_found' | 'conflict' | 'rate_limited' | 'internal'
export type JobErrorCode =
  'upstream_rejected' | 'upstream_error' | 'upstream_timeout' | 'storage_error' | 'lost' | 'internal'

/** Any error this client throws. Branch on `code`, never on `message` (the API's own rule). */
export class DutilError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message)
    this.name = new.target.name
  }
}

/**
 * The API refused the request and created no job (the spec's error envelope): 400, 401, 403,
 * 404, 409, 429 or 500. `retryAfter` (seconds) is set when the server said when to try again.
 */
export class DutilRequestError extends DutilError {
  constructor(
    message: string,
    override readonly code: RequestErrorCode | string,
    readonly status: number,
    readonly details: Array<{ path: string; message: string }> = [],
    readonly requestId: string | null = null,
    readonly retryAfter: number | null = null,
  ) {
    super(message, code)
  }
}

export class InvalidRequestError extends DutilRequestError {}
export class UnauthorizedError extends DutilRequestError {}
export class ForbiddenError extends DutilRequestError {}
export class NotFoundError extends DutilRequestError {}
export class ConflictError extends DutilRequestError {}
/** 429: wait `retryAfter` seconds. */
export class RateLimitedError extends DutilRequestError {}
export class InternalError extends DutilRequestError {}

const BY_CODE: Record<string, typeof DutilRequestError> = {
  invalid_request: InvalidRequestError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  not_found: NotFoundError,
  conflict: ConflictError,
  rate_limited: RateLimitedError,
  internal: InternalError,
}

/** The job ran and failed (or was cancelled): `job` is the whole job, `code` its error code. */
export class JobFailedError extends DutilError {
  constructor(readonly job: Job) {
    super(
      job.error
        ? `${job.utility} job ${job.id} failed: ${job.error.message}`
        : `${job.utility} job ${job.id} was ${job.status}`,
      job.error?.code ?? job.status,
    )
  }
}

/**
 * What a failed request's error says, with its cause: fetch reports every network failure as
 * "fetch failed" and keeps the reason in `cause` (`connect ECONNREFUSED 127.0.0.1:9`,
 * `getaddrinfo ENOTFOUND host`, a certificate problem with its code and subject, each address
 * tried when there were several).
 */
export function describeFailure(err: unknown): string {
  const e = err as { message?: unknown; cause?: unknown } | null | undefined
  const own = typeof e?.message === 'string' && e.message ? e.message : String(err)
  const cause = e?.cause as
    { message?: unknown; code?: unknown; errors?: unknown; cert?: { subject?: Record<string, unknown> } } | undefined
  if (!cause || typeof cause !== 'object') return own
  const parts: string[] = []
  const nested = Array.isArray(cause.errors) ? (cause.errors as Array<{ message?: unknown }>) : []
  const message = typeof cause.message === 'string' && cause.message ? cause.message : ''
  if (message) parts.push(message)
  else if (nested.length) parts.push(nested.map((n) => String(n?.message ?? n)).join('; '))
  if (typeof cause.code === 'string' && !parts.some((p) => p.includes(cause.code as string))) parts.push(cause.code)
  const subject = cause.cert?.subject
  if (subject && typeof subject === 'object')
    parts.push(
      `certificate subject ${Object.entries(subject)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(', ')}`,
    )
  return parts.length ? `${own} (${parts.join('; ')})` : own
}

/** The server could not be reached, or answered something that is not this API. */
export class DutilConnectionError extends DutilError {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message, 'connection')
  }
}

/** Waiting for a job took longer than the caller allowed; the job goes on. */
export class WaitTimeoutError extends DutilError {
  constructor(readonly job: Job) {
    super(`job ${job.id} is still ${job.status}`, 'wait_timeout')
  }
}

/** The typed error for an error envelope answer. */
export function requestError(status: number, body: unknown, headers: Headers): DutilRequestError {
  const e = (
    body as {
      error?: {
        code?: string
        message?: string
        details?: Array<{ path: string; message: string }>
        requestId?: string
      }
    } | null
  )?.error
  const retry = Number(headers.get('retry-after'))
  const Cls = (e?.code && BY_CODE[e.code]) || DutilRequestError
  return new Cls(
    e?.message ?? `HTTP ${status}`,
    e?.code ?? `http_${status}`,
    status,
    e?.details ?? [],
    e?.requestId ?? headers.get('x-request-id'),
    Number.isFinite(retry) && headers.has('retry-after') ? retry : null,
  )
}
