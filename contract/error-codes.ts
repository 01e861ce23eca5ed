/** Every error code of the v1 contract with its HTTP status (docs/api.md, Errors). */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  upstream_rejected: 422,
  upstream_error: 502,
  upstream_timeout: 504,
  storage_error: 502,
  lost: 500,
  internal: 500,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** Codes a failed job can carry (the run was attempted). */
export const JOB_ERROR_CODES = [
  'upstream_rejected',
  'upstream_error',
  'upstream_timeout',
  'storage_error',
  'lost',
  'internal',
] as const
export type JobErrorCode = (typeof JOB_ERROR_CODES)[number]

export function isJobErrorCode(value: unknown): value is JobErrorCode {
  return typeof value === 'string' && (JOB_ERROR_CODES as readonly string[]).includes(value)
}
